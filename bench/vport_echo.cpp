// vport_echo: the guest-side helpers of bench/agent_bench.py.
//
//   vport_echo echo PORT            write back every byte read from PORT (a
//                                   virtio-serial port): the floor a ping over
//                                   the same port is compared with
//   vport_echo poll-echo PORT       the same, with the agent's I/O pattern:
//                                   non-blocking port, one poll(2) over it,
//                                   a signalfd and /proc/self/mountinfo with a
//                                   long timeout per wake (its loop without
//                                   its message handling)
//   vport_echo listen-echo SOCKET   echo for one client of a unix socket
//                                   (agent_bench.py --local: no VM)
//   vport_echo exec-timed FILE CMD  write CLOCK_REALTIME (µs) to FILE, then
//                                   exec CMD in this process (same pid), so
//                                   "agent start" is the instant before execve
//
// Only libc: the echo must cost nothing beyond read(2) and write(2).
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "bench/floor_write.h"

namespace
{

int usage()
{
    std::fprintf(
        stderr,
        "usage: vport_echo echo|poll-echo PORT | listen-echo SOCKET | exec-timed FILE CMD...\n");
    return 2;
}

int echoFd(int fd, bool socket);

int echo(const char *port)
{
    // Blocking I/O: one read(2) and one write(2) per message, nothing else.
    int fd = ::open(port, O_RDWR | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        std::fprintf(stderr, "open %s: %s\n", port, std::strerror(errno));
        return 1;
    }
    return echoFd(fd, false);
}

int listenEcho(const char *path)
{
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (std::strlen(path) >= sizeof(addr.sun_path))
        return usage();
    std::strcpy(addr.sun_path, path);
    int l = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ::unlink(path);
    if (l < 0 || ::bind(l, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) < 0 ||
        ::listen(l, 1) < 0) {
        std::fprintf(stderr, "listen %s: %s\n", path, std::strerror(errno));
        return 1;
    }
    int fd = ::accept4(l, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0)
        return 1;
    return echoFd(fd, true);
}

int echoFd(int fd, bool socket)
{
    char buf[65536];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof(buf));
        if (n > 0) {
            if (!writeAll(fd, buf, static_cast<size_t>(n)))
                std::fprintf(stderr, "write: %s\n", std::strerror(errno));
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            std::fprintf(stderr, "read: %s\n", std::strerror(errno));
            return 1;
        }
        if (socket)
            return 0; // the client hung up
        // 0: no host on the port (virtio-serial). The bench keeps its host
        // connected while the echo runs, so this is rare: wait a little
        // rather than spin (a helper, not the agent: no SIGIO machinery).
        ::poll(nullptr, 0, 10);
    }
}

int pollEcho(const char *port)
{
    int fd = ::open(port, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        std::fprintf(stderr, "open %s: %s\n", port, std::strerror(errno));
        return 1;
    }
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigprocmask(SIG_BLOCK, &set, nullptr);
    int sfd = ::signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    int mfd = ::open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
    char buf[65536];
    size_t have = 0; // bytes read, not yet written back
    for (;;) {
        pollfd p[3] = {{sfd, POLLIN, 0},
                       {mfd, POLLPRI, 0},
                       {fd, static_cast<short>(have ? POLLOUT : POLLIN), 0}};
        if (::poll(p, 3, 3600 * 1000) < 0 && errno != EINTR)
            return 1;
        if (p[2].revents & POLLHUP) {
            ::poll(nullptr, 0, 10); // no host (see echo())
            continue;
        }
        if (!have && (p[2].revents & POLLIN)) {
            ssize_t n = ::read(fd, buf, sizeof(buf));
            have = n > 0 ? static_cast<size_t>(n) : 0;
        }
        if (have) {
            ssize_t w = ::write(fd, buf, have);
            if (w > 0) {
                std::memmove(buf, buf + w, have - static_cast<size_t>(w));
                have -= static_cast<size_t>(w);
            }
        }
    }
}

int execTimed(const char *file, char **argv)
{
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    FILE *f = std::fopen(file, "w");
    if (!f) {
        std::fprintf(stderr, "open %s: %s\n", file, std::strerror(errno));
        return 1;
    }
    std::fprintf(f, "%lld\n", static_cast<long long>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000);
    std::fclose(f);
    ::execvp(argv[0], argv);
    std::fprintf(stderr, "exec %s: %s\n", argv[0], std::strerror(errno));
    return 127;
}

} // namespace

int main(int argc, char **argv)
{
    if (argc == 3 && std::strcmp(argv[1], "echo") == 0)
        return echo(argv[2]);
    if (argc == 3 && std::strcmp(argv[1], "listen-echo") == 0)
        return listenEcho(argv[2]);
    if (argc == 3 && std::strcmp(argv[1], "poll-echo") == 0)
        return pollEcho(argv[2]);
    if (argc >= 4 && std::strcmp(argv[1], "exec-timed") == 0)
        return execTimed(argv[2], argv + 3);
    return usage();
}
