// A deterministic workload for comparing `daxprobe profile` with `perf stat`:
// touches N pages of a fresh anonymous mapping (N minor faults), and with
// --fork does the same again in a child it waits for (what inherit counts).
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

static int touch(long pages)
{
    long page = sysconf(_SC_PAGESIZE);
    void *m = mmap(nullptr, static_cast<size_t>(pages * page), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    auto *bytes = static_cast<volatile unsigned char *>(m);
    for (long i = 0; i < pages; ++i)
        bytes[i * page] = 1;
    munmap(m, static_cast<size_t>(pages * page));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || atol(argv[1]) <= 0) {
        fprintf(stderr, "usage: %s PAGES [--fork]\n", argv[0]);
        return 2;
    }
    long pages = atol(argv[1]);
    if (argc > 2 && strcmp(argv[2], "--fork") == 0) {
        pid_t pid = fork();
        if (pid < 0)
            return 1;
        if (pid == 0)
            _exit(touch(pages));
        int status = 0;
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            return 1;
    }
    return touch(pages);
}
