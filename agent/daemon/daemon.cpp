#include "agent/daemon/daemon.h"

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "agent/daemon/daemon_port.h"
#include "agent/daemon/listen_socket.h"

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

} // namespace

AgentDaemon::AgentDaemon(const DaemonOptions &options, protocol::AgentIdentity identity,
                         AgentHooks hooks)
    : options_(options), session_(std::move(identity), std::move(hooks),
                                  SessionOptions{.maxPending = options.maxPending})
{
}

AgentDaemon::~AgentDaemon() = default; // the listener removes its own socket

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
    if (options.watchDevices) {
        if (auto root = Root::open(options.root))
            d->changes_ = ChangeWatch::create(std::move(*root), ChangeWatchOptions{});
        else
            spdlog::warn("device changes not watched: {}", root.error().describe());
    }
    d->epollFd_.reset(::epoll_create1(EPOLL_CLOEXEC));
    if (!d->epollFd_)
        return failf(errno, "epoll_create1");
    if (auto r = d->openTransport(); !r)
        return tl::unexpected(r.error());
    d->watch(kSignal, d->signalFd_ ? d->signalFd_.get() : -1, EPOLLIN);
    d->watch(kMounts, d->mountsFd_ ? d->mountsFd_.get() : -1, EPOLLPRI);
    d->watch(kChanges, d->changes_ ? d->changes_->fd() : -1, EPOLLIN);
    d->watch(kListen, d->listen_ ? d->listen_.fd() : -1, EPOLLIN);
    return d;
}

Result<void> AgentDaemon::openTransport()
{
    if (!options_.listenPath.empty()) {
        auto l = ListenSocket::bind(options_.listenPath);
        if (!l)
            return tl::unexpected(l.error());
        listen_ = std::move(*l);
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
    // O_ASYNC has no effect in open(2); it needs F_SETOWN + F_SETFL (setAsync).
    if (signalFd_ && ::fcntl(portFd_.get(), F_SETOWN, ::getpid()) < 0)
        spdlog::warn("{}: no SIGIO ({}); host connects are noticed at the next timer", path_,
                     Error::errnoName(errno));
    else
        setAsync(true);
    spdlog::info("agent on {} (stream {})", path_, session_.identity().stream);
    probePort();
    return {};
}

void AgentDaemon::watch(Tag tag, int fd, std::uint32_t events)
{
    Watched &w = watched_[tag];
    if (fd == w.fd && (fd < 0 || events == w.events))
        return;
    epoll_event ev{};
    ev.events = events;
    ev.data.u32 = tag;
    if (w.fd >= 0 && w.fd != fd)
        ::epoll_ctl(epollFd_.get(), EPOLL_CTL_DEL, w.fd, nullptr);
    if (fd >= 0 &&
        ::epoll_ctl(epollFd_.get(), w.fd == fd ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &ev) < 0)
        spdlog::warn("epoll_ctl fd {}: {}", fd, Error::errnoName(errno));
    w = {fd, events};
}

void AgentDaemon::setAsync(bool on)
{
    if (!portFd_ || !signalFd_ || on == async_)
        return;
    int fl = ::fcntl(portFd_.get(), F_GETFL);
    if (fl < 0 || ::fcntl(portFd_.get(), F_SETFL, on ? fl | O_ASYNC : fl & ~O_ASYNC) < 0) {
        spdlog::warn("{}: O_ASYNC {} failed ({})", path_, on ? "on" : "off",
                     Error::errnoName(errno));
        return;
    }
    async_ = on;
}

void AgentDaemon::setConnected(bool connected)
{
    if (connected == session_.connected())
        return;
    ++epoch_;
    spdlog::info("host {} on {}", connected ? "connected" : "disconnected", path_);
    // SIGIO is how a port without a host tells us one arrived. With a host, the
    // port is in the epoll set (EPOLLIN, EPOLLHUP), and virtio_console would also
    // raise SIGIO for every message: a signalfd read and a probe poll per
    // command for nothing. So it is on only while no host is connected; a host
    // that came while it was off is caught by the probe at the end of runOnce.
    setAsync(!connected);
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
    watch(kClient, -1, 0); // before the close: a new client may get the same number
    clientFd_.reset();
    setConnected(false);
}

void AgentDaemon::acceptClient()
{
    for (;;) {
        UniqueFD fd(::accept4(listen_.fd(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
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

// A burst of device events has ended: one check, reported if it changed.
void AgentDaemon::recheckDevices()
{
    std::string what = changes_ ? changes_->takeDue(monotonicMs()) : std::string();
    if (what.empty())
        return;
    bool reported = session_.recheck();
    spdlog::info("change noticed ({}): {}", what,
                 reported ? fmt::format("report {}", session_.lastSeq()) : "no verdict changed");
}

Result<void> AgentDaemon::runOnce(int maxWaitMs)
{
    // What is queued goes out before a check can block the loop: the greeting
    // on start, replies, a report.
    flush();

    // epoll: a wake costs one epoll_wait, not a poll of every fd, and the
    // set changes only when a host comes or goes or output backs up.
    const std::uint32_t outEv = session_.output().empty() ? 0u : std::uint32_t{EPOLLOUT};
    // A port in POLLHUP would wake us at once, forever: out of the set until SIGIO.
    watch(kPort, portFd_ && session_.connected() ? portFd_.get() : -1, EPOLLIN | outEv);
    watch(kClient, clientFd_ ? clientFd_.get() : -1, EPOLLIN | outEv);

    std::int64_t next = nextReportMs_;
    if (options_.recheckSeconds > 0)
        next = std::min(next, nextRecheckMs_);
    if (changes_)
        next = std::min(next, changes_->deadlineMs());
    std::int64_t wait = std::max<std::int64_t>(0, next - monotonicMs());
    if (maxWaitMs >= 0)
        wait = std::min<std::int64_t>(wait, maxWaitMs);

    const std::uint64_t pollEpoch = epoch_;
    std::array<epoll_event, kTags> evs{};
    int n = ::epoll_wait(epollFd_.get(), evs.data(), kTags, static_cast<int>(wait));
    if (n < 0) {
        if (errno == EINTR)
            return {};
        return failf(errno, "epoll_wait");
    }
    std::array<std::uint32_t, kTags> revents{};
    for (int i = 0; i < n; ++i)
        revents[evs[i].data.u32] |= evs[i].events;
    auto rev = [&](Tag t) { return revents[t]; };
    constexpr Tag iSig = kSignal, iMounts = kMounts, iChanges = kChanges, iPort = kPort,
                  iListen = kListen, iClient = kClient;

    if (rev(iSig) & EPOLLIN)
        handleSignals();
    if (rev(iMounts) & (EPOLLPRI | EPOLLERR))
        session_.recheck(); // a mount came or went: has a verdict changed?
    if (rev(iChanges) & EPOLLIN)
        changes_->onReadable(monotonicMs());
    recheckDevices(); // when a burst of device events went quiet
    // A SIGIO handled above may already have seen the host go and a new one
    // come: then these revents describe the old connection and must not
    // disconnect the new one.
    if (std::uint32_t r = rev(iPort); r && epoch_ == pollEpoch) {
        // Read first: the host's last ack may still sit in the port as it hangs up.
        if (r & EPOLLIN)
            readFrom(portFd_.get());
        if ((r & (EPOLLHUP | EPOLLERR)) && epoch_ == pollEpoch)
            setConnected(false);
    }
    if (rev(iListen) & EPOLLIN)
        acceptClient();
    if (std::uint32_t r = rev(iClient)) {
        if (r & EPOLLIN)
            readFrom(clientFd_.get()); // drain before honouring a hangup
        else if (r & (EPOLLHUP | EPOLLERR))
            closeClient();
    }
    // Without SIGIO (no signal handling) a wake is the only chance to notice the
    // host; with it, a host may have come before O_ASYNC went back on.
    if (portFd_ && !session_.connected())
        probePort();
    // Timers after the events: a mount change that came with a due interval
    // is reported as the change it is (its re-check runs first), and the
    // first call's 0 ms wait makes the start report at once.
    runTimers();
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
