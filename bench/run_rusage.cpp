// Runs a command N times and prints, per run, what the kernel charged the
// child (wait4's rusage): CPU time, page faults, peak RSS. Linked statically
// so that the same program measures in the test guest, whose initramfs has
// no C++ runtime of its own; its own cost is not in the figures (only the
// child's rusage is). Output: one JSON object per line.
//
//   run_rusage [-n RUNS] [-o FILE] [-t TAG] -- CMD ARGS...
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace
{

int usage()
{
    std::fprintf(stderr, "usage: run_rusage [-n RUNS] [-o STDOUT_FILE] [-t TAG] -- CMD ARGS...\n");
    return 2;
}

} // namespace

int main(int argc, char **argv)
{
    long runs = 1;
    const char *out = "/dev/null";
    const char *tag = "";
    int i = 1;
    for (; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--") {
            ++i;
            break;
        }
        if (a == "-n" && i + 1 < argc) {
            char *end = nullptr;
            runs = std::strtol(argv[++i], &end, 10);
            if (*end || runs < 1)
                return usage();
        } else if (a == "-t" && i + 1 < argc) {
            tag = argv[++i]; // a name for the figures (no quoting: keep it plain)
        } else if (a == "-o" && i + 1 < argc) {
            out = argv[++i];
        } else {
            return usage();
        }
    }
    if (i >= argc)
        return usage();
    for (long r = 0; r < runs; ++r) {
        pid_t pid = ::fork();
        if (pid < 0) {
            std::perror("fork");
            return 2;
        }
        if (pid == 0) {
            // The command's output is not part of what is measured: discard it
            // (or keep the last run's) without a pipe to drain.
            int fd = ::open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
            if (fd >= 0)
                ::dup2(fd, 1);
            ::execvp(argv[i], argv + i);
            std::fprintf(stderr, "run_rusage: exec %s: %s\n", argv[i], std::strerror(errno));
            ::_exit(127);
        }
        int status = 0;
        struct rusage ru {
        };
        while (::wait4(pid, &status, 0, &ru) < 0)
            if (errno != EINTR) {
                std::perror("wait4");
                return 2;
            }
        long long cpuUs = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000LL +
                          ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
        int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        std::printf("{\"tag\": \"%s\", \"run\": %ld, \"rc\": %d, \"cpu_us\": %lld, \"minflt\": "
                    "%ld, \"majflt\": %ld, "
                    "\"maxrss_kib\": %ld}\n",
                    tag, r, rc, cpuUs, ru.ru_minflt, ru.ru_majflt, ru.ru_maxrss);
        std::fflush(stdout);
    }
    return 0;
}
