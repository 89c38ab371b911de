#include "daemon.h"

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include <spdlog/spdlog.h>

#include "daemon_port.h"

namespace daxprobe
{

std::int64_t monotonicMs()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

namespace
{

constexpr std::size_t kReadChunk = 64 * 1024;

Result<UniqueFD> listenUnix(const std::string &path)
{
    sockaddr_un addr{};
    if (path.size() >= sizeof(addr.sun_path))
        return failf(ENAMETOOLONG, "socket path {}", path);
    UniqueFD fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd)
        return failf(errno, "socket");
    struct stat st {
    };
    // Replace a stale socket from an earlier run, never a regular file.
    if (::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode))
        ::unlink(path.c_str());
    addr.sun_family = AF_UNIX;
    path.copy(addr.sun_path, path.size());
    if (::bind(fd.get(), reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) < 0)
        return failf(errno, "bind {}", path);
    ::chmod(path.c_str(), 0600);
    if (::listen(fd.get(), 4) < 0)
        return failf(errno, "listen {}", path);
    return fd;
}

} // namespace

AgentDaemon::AgentDaemon(const DaemonOptions &options, protocol::AgentIdentity identity,
                         AgentHooks hooks)
    : options_(options), session_(std::move(identity), std::move(hooks),
                                  SessionOptions{.maxPending = options.maxPending})
{
}

AgentDaemon::~AgentDaemon()
{
    if (listenFd_)
        ::unlink(path_.c_str());
}

Result<std::unique_ptr<AgentDaemon>> AgentDaemon::create(const DaemonOptions &options,
                                                         protocol::AgentIdentity identity,
                                                         AgentHooks hooks)
{
    std::unique_ptr<AgentDaemon> d(new AgentDaemon(options, std::move(identity), std::move(hooks)));
    if (options.handleSignals) {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGIO);
        // Blocked before O_ASYNC is set: SIGIO's default action is to terminate.
        if (sigprocmask(SIG_BLOCK, &set, nullptr) < 0)
            return failf(errno, "sigprocmask");
        d->signalFd_.reset(::signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC));
        if (!d->signalFd_)
            return failf(errno, "signalfd");
        ::signal(SIGPIPE, SIG_IGN);
    }
    if (options.watchMounts)
        d->mountsFd_.reset(::open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC));
    if (auto r = d->openTransport(); !r)
        return tl::unexpected(r.error());
    return d;
}

Result<void> AgentDaemon::openTransport()
{
    if (!options_.listenPath.empty()) {
        auto fd = listenUnix(options_.listenPath);
        if (!fd)
            return tl::unexpected(fd.error());
        listenFd_ = std::move(*fd);
        path_ = options_.listenPath;
        spdlog::info("agent on {} (stream {})", path_, session_.identity().stream);
        return {};
    }
    path_ = options_.portPath;
    if (path_.empty()) {
        auto root = Root::open(options_.root);
        if (!root)
            return tl::unexpected(root.error());
        auto found = findVirtioPort(*root, options_.portName);
        if (!found)
            return tl::unexpected(found.error());
        path_ = options_.root == "/" ? *found : options_.root + *found;
    }
    // Never closed until exit: the guest kernel discards unread host data on close.
    portFd_.reset(::open(path_.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
    if (!portFd_)
        return failf(errno, "open {}", path_);
    if (signalFd_) {
        // O_ASYNC has no effect in open(2); it needs F_SETOWN + F_SETFL.
        if (::fcntl(portFd_.get(), F_SETOWN, ::getpid()) < 0 ||
            ::fcntl(portFd_.get(), F_SETFL, ::fcntl(portFd_.get(), F_GETFL) | O_ASYNC) < 0)
            spdlog::warn("{}: no SIGIO ({}); host connects are noticed at the next timer", path_,
                         Error::errnoName(errno));
    }
    spdlog::info("agent on {} (stream {})", path_, session_.identity().stream);
    probePort();
    return {};
}

void AgentDaemon::setConnected(bool connected)
{
    if (connected == session_.connected())
        return;
    ++epoch_;
    spdlog::info("host {} on {}", connected ? "connected" : "disconnected", path_);
    if (connected)
        session_.onConnect();
    else
        session_.onDisconnect();
}

void AgentDaemon::probePort()
{
    if (!portFd_)
        return;
    pollfd p{portFd_.get(), POLLIN | POLLOUT, 0};
    if (::poll(&p, 1, 0) < 0)
        return;
    // virtio-serial: POLLHUP while no host has the chardev open.
    setConnected(!(p.revents & (POLLHUP | POLLERR)) && (p.revents & (POLLOUT | POLLIN)));
}

void AgentDaemon::closeClient()
{
    clientFd_.reset();
    setConnected(false);
}

void AgentDaemon::acceptClient()
{
    for (;;) {
        UniqueFD fd(::accept4(listenFd_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
        if (!fd)
            return;
        if (clientFd_) {
            // One host at a time, like a virtio port: tell the second one why.
            std::string busy = protocol::encode(protocol::makeError(
                protocol::error_class::kCommandFailed, "another host is connected", nullptr));
            (void)!::send(fd.get(), busy.data(), busy.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
            continue;
        }
        clientFd_ = std::move(fd);
        setConnected(true);
    }
}

void AgentDaemon::readFrom(int fd)
{
    char buf[kReadChunk];
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n > 0) {
        session_.onBytes(std::string_view(buf, static_cast<std::size_t>(n)));
        return;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (clientFd_) {
        closeClient();
    } else {
        // A virtio port reads 0 only with no host. If one is back already, it
        // is a new host: it gets a fresh greeting and the resends.
        setConnected(false);
        probePort();
    }
}

void AgentDaemon::flush()
{
    int fd = clientFd_ ? clientFd_.get() : portFd_.get();
    while (fd >= 0 && session_.connected() && !session_.output().empty()) {
        auto out = session_.output();
        ssize_t n = clientFd_ ? ::send(fd, out.data(), out.size(), MSG_NOSIGNAL)
                              : ::write(fd, out.data(), out.size());
        if (n > 0) {
            session_.consumed(static_cast<std::size_t>(n));
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return; // wait for POLLOUT
        if (clientFd_)
            closeClient();
        else
            probePort();
        return;
    }
}

void AgentDaemon::handleSignals()
{
    signalfd_siginfo si{};
    while (::read(signalFd_.get(), &si, sizeof(si)) == static_cast<ssize_t>(sizeof(si))) {
        if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) {
            spdlog::info("signal {}: shutting down", si.ssi_signo);
            stopping_ = true;
        } else if (si.ssi_signo == SIGIO) {
            probePort();
        }
    }
}

void AgentDaemon::logNewReports()
{
    if (session_.lastSeq() == loggedSeq_)
        return;
    loggedSeq_ = session_.lastSeq();
    const auto &q = session_.queue().entries();
    spdlog::info("report {} queued ({}, {}; {} unacknowledged, {} dropped){}", loggedSeq_,
                 session_.lastReason(), session_.lastVerdict(), q.size(),
                 session_.queue().dropped(), session_.connected() ? "" : ", host away");
}

void AgentDaemon::runTimers()
{
    std::int64_t now = monotonicMs();
    if (nextReportMs_ == 0) {
        session_.produceReport("start");
        nextReportMs_ = now + std::int64_t(options_.intervalSeconds) * 1000;
        nextRecheckMs_ = now + std::int64_t(options_.recheckSeconds) * 1000;
        return;
    }
    if (now >= nextReportMs_) {
        session_.produceReport("interval");
        nextReportMs_ = now + std::int64_t(options_.intervalSeconds) * 1000;
        nextRecheckMs_ = now + std::int64_t(options_.recheckSeconds) * 1000;
    } else if (options_.recheckSeconds > 0 && now >= nextRecheckMs_) {
        session_.recheck();
        nextRecheckMs_ = now + std::int64_t(options_.recheckSeconds) * 1000;
    }
}

Result<void> AgentDaemon::runOnce(int maxWaitMs)
{
    runTimers();
    logNewReports();
    flush();

    std::vector<pollfd> fds;
    auto add = [&](int fd, short events) {
        fds.push_back({fd, events, 0});
        return fds.size() - 1;
    };
    const short outEv = session_.output().empty() ? 0 : POLLOUT;
    std::size_t iSig = signalFd_ ? add(signalFd_.get(), POLLIN) : SIZE_MAX;
    std::size_t iMounts = mountsFd_ ? add(mountsFd_.get(), POLLPRI) : SIZE_MAX;
    // A port in POLLHUP would wake poll at once, forever: leave it out until SIGIO.
    std::size_t iPort =
        portFd_ && session_.connected() ? add(portFd_.get(), POLLIN | outEv) : SIZE_MAX;
    std::size_t iListen = listenFd_ ? add(listenFd_.get(), POLLIN) : SIZE_MAX;
    std::size_t iClient = clientFd_ ? add(clientFd_.get(), POLLIN | outEv) : SIZE_MAX;

    std::int64_t next = nextReportMs_;
    if (options_.recheckSeconds > 0)
        next = std::min(next, nextRecheckMs_);
    std::int64_t wait = std::max<std::int64_t>(0, next - monotonicMs());
    if (maxWaitMs >= 0)
        wait = std::min<std::int64_t>(wait, maxWaitMs);

    const std::uint64_t pollEpoch = epoch_;
    int n = ::poll(fds.data(), fds.size(), static_cast<int>(wait));
    if (n < 0) {
        if (errno == EINTR)
            return {};
        return failf(errno, "poll");
    }
    auto rev = [&](std::size_t i) -> short { return i == SIZE_MAX ? 0 : fds[i].revents; };

    if (rev(iSig) & POLLIN)
        handleSignals();
    if (rev(iMounts) & (POLLPRI | POLLERR))
        session_.recheck(); // a mount came or went: has a verdict changed?
    // A SIGIO handled above may already have seen the host go and a new one
    // come: then these revents describe the old connection and must not
    // disconnect the new one.
    if (short r = rev(iPort); r && epoch_ == pollEpoch) {
        // Read first: the host's last ack may still sit in the port as it hangs up.
        if (r & POLLIN)
            readFrom(portFd_.get());
        if ((r & (POLLHUP | POLLERR)) && epoch_ == pollEpoch)
            setConnected(false);
    }
    if (rev(iListen) & POLLIN)
        acceptClient();
    if (short r = rev(iClient)) {
        if (r & POLLIN)
            readFrom(clientFd_.get()); // drain before honouring a hangup
        else if (r & (POLLHUP | POLLERR))
            closeClient();
    }
    // Without SIGIO (no signal handling) a timer wake is the only chance to notice the host.
    if (portFd_ && !session_.connected() && !signalFd_)
        probePort();
    logNewReports();
    flush();
    return {};
}

int AgentDaemon::run()
{
    while (!stopping_) {
        if (auto r = runOnce(); !r) {
            spdlog::error("{}", r.error().describe());
            return 1;
        }
    }
    flush(); // best effort: the host may still take our last words
    return 0;
}

} // namespace daxprobe
