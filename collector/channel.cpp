#include "collector/channel.h"

#include <cerrno>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <functional>
#include <vector>

#include <spdlog/spdlog.h>

#include "collector/report_policy.h"

namespace daxprobe::collector
{

std::int64_t nowMs()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

std::int64_t wallSeconds()
{
    return static_cast<std::int64_t>(::time(nullptr));
}

void TokenBucket::refill(std::int64_t now)
{
    if (lastMs == 0) {
        tokens = burst;
    } else if (now > lastMs) {
        tokens = std::min(burst, tokens + rate * double(now - lastMs) / 1000.0);
    }
    lastMs = now;
}

std::int64_t TokenBucket::waitFor(double amount) const
{
    if (tokens >= amount || rate <= 0)
        return 0;
    double ms = (amount - tokens) * 1000.0 / rate;
    constexpr double kHour = 3600e3; // a rate of 0.01/s waits 100 s for one token
    return !(ms < kHour) ? static_cast<std::int64_t>(kHour) : static_cast<std::int64_t>(ms) + 1;
}

std::size_t TokenBucket::whole(std::size_t cap) const
{
    if (!(tokens >= 1))
        return 0; // also NaN
    return tokens >= static_cast<double>(cap) ? cap : static_cast<std::size_t>(tokens);
}

Channel::Channel(ChannelConfig config, ChannelEnv env)
    : config_(std::move(config)), env_(env), backoffMs_(env.options.backoffInitialMs)
{
}

void Channel::tryConnect(std::int64_t now)
{
    const CollectorOptions &o = env_.options;
    sockaddr_un addr{};
    const std::string &path = config_.socketPath;
    auto retry = [&](int err) {
        // EMFILE/ENFILE is the host's fault, not the guest's: say so loudly.
        if (err == EMFILE || err == ENFILE)
            spdlog::error("{}: connect {}: {}", config_.name, path, Error::errnoName(err));
        else
            spdlog::debug("{}: connect {}: {}", config_.name, path, Error::errnoName(err));
        nextAttemptMs = now + backoffMs_;
        backoffMs_ = std::min(backoffMs_ * 2, o.backoffMaxMs);
    };
    if (path.size() >= sizeof(addr.sun_path))
        return retry(ENAMETOOLONG);
    UniqueFD fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd)
        return retry(errno);
    addr.sun_family = AF_UNIX;
    path.copy(addr.sun_path, path.size());
    if (::connect(fd.get(), reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) < 0)
        return retry(errno);

    fd_ = std::move(fd);
    backoffMs_ = o.backoffInitialMs;
    out_.clear();
    bytes_ = {o.bytesPerSecond, o.burstBytes, 0, 0};
    messages_ = {o.messagesPerSecond, o.burstMessages, 0, 0};
    bytes_.refill(now);
    messages_.refill(now);
    seen_ = {};
    retryAtMs_ = 0;
    heldStoredMark_ = heldErrorsMark_ = 0;

    // The peer of a QEMU chardev socket is QEMU itself.
    ucred cred{};
    socklen_t len = sizeof(cred);
    peerPid = ::getsockopt(fd_.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 ? cred.pid : 0;

    if (env_.epollFd >= 0) {
        // Edge-triggered: one event per arrival, and flags here say what is left.
        epoll_event ev{};
        ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
        ev.data.ptr = this;
        if (::epoll_ctl(env_.epollFd, EPOLL_CTL_ADD, fd_.get(), &ev) < 0) {
            spdlog::error("{}: epoll_ctl: {}", config_.name, Error::errnoName(errno));
            fd_.reset();
            return retry(errno);
        }
    }
    readable_ = true; // the greeting may already be there
    hup_ = false;

    // Reports are committed by the collector, every guest's in one transaction.
    IngestHooks hooks;
    hooks.identity = [this](const protocol::AgentIdentity &id) {
        noteIdentity(env_.store, config_.name, config_.socketPath, id, wallSeconds());
    };
    ingestor_ = std::make_unique<Ingestor>(o.ingest, std::move(hooks));
    ingestor_->start(++env_.syncCounter);
    out_ += ingestor_->takeOutput();
    env_.metrics.update(config_.name, [](VmMetrics &m) {
        m.connected = true;
        ++m.connects;
    });
    spdlog::info("{}: connected to {} (qemu pid {})", config_.name, path, peerPid);
    // Staggered: a thousand guests connecting at once do not all read /proc
    // in the same wake (a fixed phase per VM name, within the spread).
    std::int64_t spread = std::min<std::int64_t>(o.hostFactsIntervalMs, o.hostFactsSpreadMs);
    nextFactsMs =
        now + (spread > 0 ? static_cast<std::int64_t>(std::hash<std::string>{}(config_.name) %
                                                      static_cast<std::uint64_t>(spread))
                          : 0);
    flush(now);
}

void Channel::disconnect(const std::string &reason, bool penalty, std::int64_t now)
{
    if (!fd_)
        return;
    spdlog::info("{}: disconnected ({})", config_.name, reason);
    fd_.reset(); // closing it also takes it out of the epoll set
    ingestor_.reset();
    out_.clear();
    readable_ = hup_ = handled_ = false;
    nextAttemptMs = now + (penalty ? env_.options.penaltyMs : backoffMs_);
    throttledUntilMs = penalty ? nextAttemptMs : 0;
    retryAtMs_ = 0;
    env_.metrics.update(config_.name, [&](VmMetrics &m) {
        m.connected = false;
        m.storeHeld = false;
        ++m.disconnects[reason];
    });
}

void Channel::onEvent(std::uint32_t events, std::int64_t now)
{
    if (!fd_)
        return;
    if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
        readable_ = true; // data, or the EOF/error a read will report
    // The hang-up may come in the same event as the peer's last data, and
    // edge-triggered, it is never reported again: remember it, so reading
    // goes on past a short read to the EOF.
    if (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR))
        hup_ = true;
    if ((events & EPOLLOUT) && !out_.empty())
        flush(now);
}

bool Channel::due(std::int64_t now) const
{
    if (!fd_)
        return false;
    if (ingestor_->violation() || (hup_ && throttledUntilMs > now))
        return true;
    if (throttledUntilMs > now)
        return (retryAtMs_ && now >= retryAtMs_);
    return readable_ || busy() || (retryAtMs_ && now >= retryAtMs_);
}

bool Channel::wantsInput(std::int64_t now) const
{
    return fd_ && throttledUntilMs <= now && ingestor_->backlog() == 0;
}

bool Channel::busy() const
{
    return fd_ && ingestor_->backlog() > 0;
}

std::size_t Channel::bufferedBytes() const
{
    return ingestor_ ? ingestor_->bufferedBytes() : 0;
}

std::int64_t Channel::nextDeadline(std::int64_t now) const
{
    if (!fd_)
        return nextAttemptMs;
    std::int64_t d = now + 3600 * 1000;
    if (throttledUntilMs > now)
        d = std::min(d, throttledUntilMs);
    if (nextFactsMs)
        d = std::min(d, nextFactsMs);
    if (retryAtMs_)
        d = std::min(d, retryAtMs_);
    return d;
}

void Channel::onReadable(std::int64_t now, std::size_t room)
{
    if (!fd_)
        return;
    bytes_.refill(now);
    // Read no more than the guest's allowance, the per-wake chunk and the
    // memory the collector can spare, so one guest can neither starve the
    // others nor make us buffer without bound.
    std::size_t want = std::min(env_.options.readChunk, bytes_.whole(room));
    if (want == 0) {
        if (bytes_.tokens < 1) {
            throttledUntilMs = now + std::max<std::int64_t>(1, bytes_.waitFor(1));
            env_.metrics.update(config_.name, [](VmMetrics &m) { ++m.throttled; });
        }
        return;
    }
    static std::vector<char> buf;
    buf.resize(std::max(buf.size(), want));
    ssize_t n = ::read(fd_.get(), buf.data(), want);
    if (n < 0 && errno == EINTR)
        return;
    if (n < 0 && errno == EAGAIN) {
        readable_ = false;
        return;
    }
    if (n <= 0)
        return disconnect(n == 0 ? "eof" : "read_error", false, now);
    // A short read drained the socket; anything arriving later is a new
    // edge. Not after a hang-up: no edge follows it, and the EOF is still due.
    if (static_cast<std::size_t>(n) < want && !hup_)
        readable_ = false;
    bytes_.tokens -= double(n);
    ingestor_->receive(std::string_view(buf.data(), static_cast<std::size_t>(n)));
    env_.metrics.update(config_.name,
                        [&](VmMetrics &m) { m.bytes += static_cast<std::uint64_t>(n); });
    // Handled in handle(), the channel's one turn of this wake.
}

bool Channel::handle(std::int64_t now)
{
    handled_ = false;
    if (!fd_)
        return false;
    // A peer that hung up while paused is not waited for (it resends).
    if (hup_ && throttledUntilMs > now) {
        disconnect("hangup", false, now);
        return false;
    }
    // A violation found while receiving (an over-long line) is acted on in complete().
    if (!((busy() && throttledUntilMs <= now) || ingestor_->violation()))
        return false;
    messages_.refill(now);
    // Each message is a unit of work: a bounded number per wake keeps every
    // guest's turn short.
    std::size_t limit = std::max<std::size_t>(1, messages_.whole(env_.options.maxMessagesPerWake));
    std::uint64_t answersBefore = ingestor_->stats().ackReplies;
    std::size_t handled = ingestor_->process(limit);
    // The agent's answers to our acks are owed, not chosen: free of its rate.
    std::uint64_t free = ingestor_->stats().ackReplies - answersBefore;
    messages_.tokens -= double(handled - std::min<std::uint64_t>(handled, free));
    handled_ = true;
    return !ingestor_->uncommitted().empty();
}

ChannelReports Channel::reports()
{
    return {&config_.name, ingestor_ ? ingestor_->uncommitted() : std::span<BatchEntry>()};
}

void Channel::complete(std::int64_t now, const Result<void> *committed)
{
    if (!fd_)
        return;
    if (committed)
        ingestor_->afterCommit(*committed);
    if (handled_) {
        handled_ = false;
        out_ += ingestor_->takeOutput();
        account();
        if (const auto &v = ingestor_->violation()) {
            spdlog::warn("{}: {}", config_.name, *v);
            return disconnect("violation", true, now);
        }
        if (out_.size() > env_.options.maxOwedBytes)
            return disconnect("peer_not_reading", true, now);
        if (bytes_.tokens < 1 || messages_.tokens < 1) {
            throttledUntilMs = now + std::max(bytes_.waitFor(1), messages_.waitFor(1));
            env_.metrics.update(config_.name, [](VmMetrics &m) { ++m.throttled; });
        }
    }
    checkHeld(now);
    flush(now);
}

void Channel::account()
{
    // Ingestor stats are per connection; the metrics are for the VM's life.
    const IngestStats st = ingestor_->stats();
    const bool held = ingestor_->held();
    env_.metrics.update(config_.name, [&](VmMetrics &m) {
        m.messages += st.messages - seen_.messages;
        m.reports += st.reports - seen_.reports;
        m.stored += st.stored - seen_.stored;
        m.duplicates += st.duplicates - seen_.duplicates;
        m.invalid += st.invalid - seen_.invalid;
        m.deferred += st.deferred - seen_.deferred;
        m.storeHeld = held;
    });
    seen_ = st;
}

void Channel::checkHeld(std::int64_t now)
{
    const CollectorOptions &o = env_.options;
    if (!ingestor_->held()) {
        retryAtMs_ = 0;
        // The retry wait starts small again once a store went through.
        if (retryMs_ &&
            ingestor_->stats().stored + ingestor_->stats().duplicates > heldStoredMark_) {
            spdlog::info("{}: store works again; acknowledging", config_.name);
            retryMs_ = 0;
        }
        return;
    }
    std::uint64_t errors = ingestor_->stats().storeErrors;
    if (!retryAtMs_ || errors != heldErrorsMark_) { // a new failure (maybe of a resend)
        retryMs_ = retryMs_ ? std::min(retryMs_ * 2, o.storeRetryMaxMs) : o.storeRetryInitialMs;
        retryAtMs_ = now + retryMs_;
        heldErrorsMark_ = errors;
        heldStoredMark_ = ingestor_->stats().stored + ingestor_->stats().duplicates;
        spdlog::error("{}: acks withheld after a store error; asking the agent to resend in {} ms",
                      config_.name, retryMs_);
    } else if (now >= retryAtMs_) {
        ingestor_->resync(++env_.syncCounter);
        out_ += ingestor_->takeOutput();
        // One sync at a time: its return may queue behind a megabyte of the
        // agent's earlier resend, and a newer sync would make it stale
        // (round after round, if reading takes longer than the retry wait).
        // Only if no return comes at all, sync again.
        retryAtMs_ = now + std::max(o.storeRetryMaxMs, o.syncAnswerTimeoutMs);
    }
}

void Channel::flush(std::int64_t now)
{
    while (fd_ && !out_.empty()) {
        ssize_t n = ::send(fd_.get(), out_.data(), out_.size(), MSG_NOSIGNAL);
        if (n > 0) {
            out_.erase(0, static_cast<std::size_t>(n));
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        return disconnect("write_error", false, now);
    }
}

} // namespace daxprobe::collector
