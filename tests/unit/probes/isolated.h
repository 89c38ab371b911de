#pragma once

#include <csignal>
#include <functional>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

// Runs `body` in a forked child that an alarm kills if it blocks, so a test
// of a read that once hung (a FIFO) fails instead of hanging the suite. The
// alarm is a hang guard, not a timing threshold: the body never waits on
// anything. Returns the body's result, or a description of how it died.
inline std::string runIsolated(const std::function<std::string()> &body, unsigned hangSeconds = 10)
{
    int pipefd[2];
    if (::pipe(pipefd) != 0)
        return "pipe failed";
    pid_t pid = ::fork();
    if (pid < 0)
        return "fork failed";
    if (pid == 0) {
        ::close(pipefd[0]);
        ::alarm(hangSeconds);
        std::string out = body();
        std::size_t off = 0;
        while (off < out.size()) {
            ssize_t n = ::write(pipefd[1], out.data() + off, out.size() - off);
            if (n <= 0)
                break;
            off += static_cast<std::size_t>(n);
        }
        ::_exit(0);
    }
    ::close(pipefd[1]);
    std::string got;
    char buf[512];
    for (;;) {
        ssize_t n = ::read(pipefd[0], buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got.append(buf, static_cast<std::size_t>(n));
    }
    ::close(pipefd[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFSIGNALED(status))
        return WTERMSIG(status) == SIGALRM ? std::string("HUNG (killed after the hang guard)")
                                           : "killed by signal " + std::to_string(WTERMSIG(status));
    return got;
}
