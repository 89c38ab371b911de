/* The guest kernel's own answers about daxprobe's evidence sources, asked
 * directly and not through daxprobe's code (tests/vm/README.md): can these
 * credentials open a perf software counter (page faults, user space only:
 * the least a profile needs; and one that counts kernel-mode faults too),
 * and does cachestat(2) exist. One line each,
 * "NAME=ok" or "NAME=ERRNO_NAME message". Built static for the initramfs. */
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <linux/perf_event.h>
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

int main(int argc, char **argv)
{
    perfAnswer("perf", true);
    perfAnswer("perf_kernel", false);

    /* Any file with a page cache will do: the one named, else this program. */
    int f = open(argc > 1 ? argv[1] : "/proc/self/exe", O_RDONLY);
    struct cachestat_range range = {0, 0};
    struct cachestat cs;
    answer("cachestat", f < 0 ? -1 : syscall(__NR_cachestat, f, &range, &cs, 0));
    return 0;
}
