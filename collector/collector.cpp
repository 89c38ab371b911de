#include "collector/collector.h"

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <vector>

#include <spdlog/spdlog.h>

#include "collector/backing_files.h"
#include "collector/discovery.h"
#include "collector/host_facts.h"
#include "collector/report_policy.h"

namespace daxprobe::collector
{

namespace
{

// Guests and /metrics clients share one fd table: take all the kernel
// allows (systemd's LimitNOFILE sets the hard limit), since the soft 1024
// default would cap the guests one collector can serve.
void raiseFdLimit()
{
    rlimit rl{};
    if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (::setrlimit(RLIMIT_NOFILE, &rl) < 0)
            spdlog::debug("setrlimit NOFILE: {}", Error::errnoName(errno));
    }
}

} // namespace

Collector::Collector(CollectorOptions options, Store store)
    : options_(std::move(options)), store_(std::move(store)),
      metrics_(std::make_unique<MetricsRegistry>())
{
}

Collector::~Collector() = default;

Result<std::unique_ptr<Collector>> Collector::create(CollectorOptions options)
{
    if (options.stateDir.empty())
        options.stateDir = defaultStateDir();
    if (::mkdir(options.stateDir.c_str(), 0750) < 0 && errno != EEXIST)
        return failf(errno, "create state directory {}", options.stateDir);
    if (::access(options.stateDir.c_str(), W_OK) < 0)
        return failf(errno, "state directory {} is not writable", options.stateDir);
    auto store = Store::open(
        options.stateDir + "/collector.db",
        StoreOptions{options.maxRowsPerVm, options.maxBytesPerVm, options.busyTimeoutMs});
    if (!store) // name the file: "file is not a database" alone says not which
        return failf(store.error().code, "{}/collector.db: {}", options.stateDir,
                     store.error().message);
    std::unique_ptr<Collector> c(new Collector(std::move(options), std::move(*store)));
    if (auto r = c->setup(); !r)
        return tl::unexpected(r.error());
    return c;
}

Result<void> Collector::setup()
{
    if (options_.handleSignals) {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGINT);
        if (sigprocmask(SIG_BLOCK, &set, nullptr) < 0)
            return failf(errno, "sigprocmask");
        signalFd_.reset(::signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC));
        if (!signalFd_)
            return failf(errno, "signalfd");
        ::signal(SIGPIPE, SIG_IGN);
        raiseFdLimit();
    }
    inotifyFd_.reset(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
    if (!inotifyFd_)
        return failf(errno, "inotify_init1");
    epollFd_.reset(::epoll_create1(EPOLL_CLOEXEC));
    if (!epollFd_)
        return failf(errno, "epoll_create1");
    // Channels carry their own pointer in the event; these two carry null
    // and are told apart by the fd.
    for (int fd : {signalFd_.get(), inotifyFd_.get()}) {
        if (fd < 0)
            continue;
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.u64 = static_cast<std::uint64_t>(fd) << 1 | 1; // odd: never a Channel*
        if (::epoll_ctl(epollFd_.get(), EPOLL_CTL_ADD, fd, &ev) < 0)
            return failf(errno, "epoll_ctl");
    }

    for (const auto &s : options_.sockets) {
        addChannel(s);
        // A VM restart recreates its socket: reconnect at once, not at the next backoff.
        watch(parentDir(s.socketPath), IN_ONLYDIR);
    }
    for (auto &d : options_.watchDirs) {
        while (d.size() > 1 && d.back() == '/')
            d.pop_back(); // "dir/" and "dir" are one watch
        armWatchDir(d);
    }
    scanWatchDirs(nowMs());
    if (!options_.metricsListen.empty()) {
        HttpLimits lim{options_.httpMaxConnections, options_.httpRequestTimeoutMs,
                       options_.httpMaxBodyBytes};
        auto server = MetricsServer::start(options_.metricsListen, lim, *metrics_);
        if (!server) {
            // Guests matter more than the endpoint: collect without it.
            spdlog::error("metrics: {}", server.error().describe());
        } else {
            server_ = std::move(*server);
            spdlog::info("metrics on port {} (/metrics, at most {} connections at once)",
                         server_->port(), lim.maxConnections);
        }
    }
    return {};
}

bool Collector::connected(const std::string &vm) const
{
    auto it = channels_.find(vm);
    return it != channels_.end() && it->second.connected();
}

std::size_t Collector::bufferedBytes() const
{
    std::size_t total = 0;
    for (const auto &[name, c] : channels_)
        total += c.bufferedBytes();
    return total;
}

// Every guest together holds the budget of unfinished lines: hang up on the
// one holding most. A real agent resends after reconnecting; a hostile one
// cannot pin memory. Returns what all guests hold afterwards.
std::size_t Collector::relieveMemory(std::int64_t now)
{
    Channel *biggest = nullptr;
    for (auto &[name, c] : channels_)
        if (!biggest || c.bufferedBytes() > biggest->bufferedBytes())
            biggest = &c;
    if (biggest && biggest->bufferedBytes() > 0) {
        spdlog::warn("{}: holds {} bytes of unfinished lines while guests together hold the "
                     "limit of {}: disconnecting it",
                     biggest->config().name, biggest->bufferedBytes(), options_.maxBufferedBytes);
        biggest->disconnect("memory_pressure", false, now);
    }
    return bufferedBytes();
}

void Collector::refreshFacts(Channel &c, std::int64_t now)
{
    c.nextFactsMs = now + options_.hostFactsIntervalMs;
    int pid = c.peerPid;
    auto root = Root::open(options_.procRoot);
    if (!root)
        return;
    if (!c.config().pidfile.empty()) {
        auto sys = Root::open("/");
        if (auto txt =
                sys ? sys->readAttr(c.config().pidfile) : Result<std::string>(fail("no root")))
            pid = std::atoi(txt->c_str());
    }
    if (pid <= 0)
        return;
    QemuFacts facts = readQemuFacts(*root, pid);
    measureBackingFiles(facts);
    if (auto r = store_.setHostFacts(c.config().name, toJson(facts)); !r)
        spdlog::debug("{}: {}", c.config().name, r.error().describe());
    else
        spdlog::debug("{}: host facts stored ({} backing file(s))", c.config().name,
                      facts.backends.size());
    metrics_->update(c.config().name, [&](VmMetrics &m) { m.qemu = std::move(facts); });
}

std::int64_t Collector::waitMs(std::int64_t now, int maxWaitMs) const
{
    std::int64_t deadline = now + 3600 * 1000;
    for (const auto &[name, c] : channels_) {
        if (c.due(now))
            return 0; // input or lines left from the last turn: no sleeping
        deadline = std::min(deadline, c.nextDeadline(now));
    }
    std::int64_t wait = std::max<std::int64_t>(0, deadline - now);
    return maxWaitMs >= 0 ? std::min<std::int64_t>(wait, maxWaitMs) : wait;
}

void Collector::readAndHandle(std::vector<Channel *> &turn, std::int64_t now)
{
    std::size_t buffered = bufferedBytes();
    for (Channel *c : turn) {
        if (!c->connected() || !c->readable() || !c->wantsInput(now))
            continue;
        if (buffered >= options_.maxBufferedBytes)
            buffered = relieveMemory(now);
        if (!c->connected())
            continue; // it held the most: hung up on
        std::size_t before = c->bufferedBytes();
        c->onReadable(now,
                      options_.maxBufferedBytes - std::min(buffered, options_.maxBufferedBytes));
        buffered = buffered - before + c->bufferedBytes();
    }
}

Result<void> Collector::runOnce(int maxWaitMs)
{
    std::int64_t now = nowMs();
    for (auto &[name, c] : channels_)
        if (!c.connected() && now >= c.nextAttemptMs)
            c.tryConnect(now);

    std::array<epoll_event, 256> events;
    int n = ::epoll_wait(epollFd_.get(), events.data(), static_cast<int>(events.size()),
                         static_cast<int>(waitMs(now, maxWaitMs)));
    if (n < 0 && errno != EINTR)
        return failf(errno, "epoll_wait");
    now = nowMs();
    bool inotify = false;
    for (int i = 0; i < n; ++i) {
        std::uint64_t tag = events[static_cast<std::size_t>(i)].data.u64;
        if (!(tag & 1)) {
            static_cast<Channel *>(events[static_cast<std::size_t>(i)].data.ptr)
                ->onEvent(events[static_cast<std::size_t>(i)].events, now);
        } else if (static_cast<int>(tag >> 1) == inotifyFd_.get()) {
            inotify = true;
        } else {
            signalfd_siginfo si{};
            while (::read(signalFd_.get(), &si, sizeof(si)) == static_cast<ssize_t>(sizeof(si)))
                stopping_ = true;
        }
    }
    if (stopping_)
        return {}; // promptly: no further turns once asked to stop

    // This wake's turn: every channel with something to do. A scan, not a
    // queue: the checks are a few compares each, and the kernel side (epoll)
    // no longer walks every socket.
    std::vector<Channel *> turn;
    for (auto &[name, c] : channels_)
        if (c.due(now) || (c.connected() && c.nextFactsMs && now >= c.nextFactsMs))
            turn.push_back(&c);
    readAndHandle(turn, now);

    // Every report of the wake, of every guest, in one transaction; each
    // channel acks after it from its own receipts.
    std::vector<Channel *> withReports, without;
    std::vector<ChannelReports> batch;
    for (Channel *c : turn) {
        if (!c->handle(now)) {
            without.push_back(c);
            continue;
        }
        withReports.push_back(c);
        batch.push_back(c->reports());
    }
    if (!batch.empty()) {
        Result<void> committed = storeReports(store_, *metrics_, batch, wallSeconds());
        for (Channel *c : withReports)
            c->complete(now, &committed);
    }
    for (Channel *c : without)
        c->complete(now, nullptr);
    if (metrics_->walPinned())
        noteWal(store_, *metrics_); // the checkpointer's timer may have freed it
    for (Channel *c : turn) {
        if (c->connected() && c->nextFactsMs && now >= c->nextFactsMs)
            refreshFacts(*c, now);
    }
    if (inotify)
        handleInotify(now); // last: it may drop channels that are gone
    return {};
}

int Collector::run()
{
    spdlog::info("collector: {} channel(s), {} watched dir(s), state in {}", channels_.size(),
                 options_.watchDirs.size(), options_.stateDir);
    while (!stopping_) {
        if (auto r = runOnce(); !r) {
            spdlog::error("{}", r.error().describe());
            return 1;
        }
    }
    spdlog::info("collector: stopping");
    return 0;
}

} // namespace daxprobe::collector
