/* The guest kernel's own answers about daxprobe's evidence sources, asked
 * directly and not through daxprobe's code (tests/vm/README.md): can these
 * credentials open a perf software counter (page faults, user space only:
 * the least a profile needs; and one that counts kernel-mode faults too),
 * and does cachestat(2) exist. One line each,
 * "NAME=ok" or "NAME=ERRNO_NAME message". Built static for the initramfs.
 *
 * kernel-answers --wait-list FILE SECONDS: waits until the kernel's bad-block
 * list FILE (a sysfs `badblocks`) is not empty and prints it. The kernel
 * fills a region's list from a worker after a machine check was logged
 * (drivers/acpi/nfit/mce.c) and then notifies the attribute: woken by that
 * notification (poll POLLPRI), never by a timer. Exit 1 when SECONDS pass
 * without it, 2 when FILE cannot be read.
 *
 * kernel-answers --statx FILE...: each FILE's STATX_ATTR_DAX as the kernel
 * gives it, "statx_dax=0|1 FILE" (or "statx_dax=error MESSAGE FILE"): the
 * libguestfs appliance's check (tests/vm/guestfs_test.py), whose userland has
 * no tool that shows the attribute. */
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_cachestat
#define __NR_cachestat 451 /* the same on every architecture (6.5) */
#endif

struct cachestat_range {
    unsigned long long off, len;
};
struct cachestat {
    unsigned long long cache, dirty, writeback, evicted, recently_evicted;
};

static void answer(const char *name, long rc)
{
    if (rc >= 0)
        printf("%s=ok\n", name);
    else
        printf("%s=%s %s\n", name, errno == ENOSYS ? "ENOSYS" : "error", strerror(errno));
}

static void perfAnswer(const char *name, bool excludeKernel)
{
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof(attr));
    attr.size = sizeof(attr);
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_PAGE_FAULTS;
    attr.disabled = 1;
    attr.exclude_kernel = excludeKernel ? 1 : 0;
    long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
    answer(name, fd);
    if (fd >= 0)
        close(static_cast<int>(fd));
}

static long nowMs()
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

static int waitList(const char *path, int seconds)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        return 2;
    }
    const long deadline = nowMs() + seconds * 1000L;
    for (;;) {
        /* A read from 0 renders the list again and marks the notifications
         * seen so far as read: one after it wakes the poll. */
        char buf[4096];
        ssize_t n = pread(fd, buf, sizeof(buf), 0);
        if (n < 0) {
            fprintf(stderr, "%s: %s\n", path, strerror(errno));
            return 2;
        }
        for (ssize_t i = 0; i < n; i++) {
            if (buf[i] != '\n' && buf[i] != ' ') {
                fwrite(buf, 1, static_cast<size_t>(n), stdout);
                return 0;
            }
        }
        long left = deadline - nowMs();
        struct pollfd p = {fd, POLLPRI, 0};
        if (left <= 0 || poll(&p, 1, static_cast<int>(left)) == 0) {
            fprintf(stderr, "%s: still empty, no notification in %d s\n", path, seconds);
            return 1;
        }
    }
}

/* Older headers had 0x2000 for it: the kernel's value since 5.8. */
constexpr unsigned long long kStatxAttrDax = 0x00200000ULL;

static int statxDax(int n, char **files)
{
    int rc = 0;
    for (int i = 0; i < n; i++) {
        struct statx st;
        memset(&st, 0, sizeof(st));
        if (statx(AT_FDCWD, files[i], AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &st) != 0) {
            printf("statx_dax=error %s %s\n", strerror(errno), files[i]);
            rc = 1;
        } else if (!(st.stx_attributes_mask & kStatxAttrDax)) {
            printf("statx_dax=error not in the attributes mask %s\n", files[i]);
            rc = 1;
        } else {
            printf("statx_dax=%d %s\n", (st.stx_attributes & kStatxAttrDax) ? 1 : 0, files[i]);
        }
    }
    return rc;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "--statx") == 0)
        return statxDax(argc - 2, argv + 2);
    if (argc == 4 && strcmp(argv[1], "--wait-list") == 0)
        return waitList(argv[2], atoi(argv[3]));
    perfAnswer("perf", true);
    perfAnswer("perf_kernel", false);

    /* Any file with a page cache will do: the one named, else this program. */
    int f = open(argc > 1 ? argv[1] : "/proc/self/exe", O_RDONLY);
    struct cachestat_range range = {0, 0};
    struct cachestat cs;
    answer("cachestat", f < 0 ? -1 : syscall(__NR_cachestat, f, &range, &cs, 0));
    return 0;
}
