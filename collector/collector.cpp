#include "collector.h"

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include <spdlog/spdlog.h>

#include "discovery.h"
#include "host_facts.h"

namespace daxprobe::collector
{

namespace
{

bool isSocket(const std::string &path)
{
    struct stat st {
    };
    return ::stat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

std::string parentDir(const std::string &path)
{
    auto slash = path.rfind('/');
    if (slash == std::string::npos)
        return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

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
    if (!store)
        return tl::unexpected(store.error());
    std::unique_ptr<Collector> c(new Collector(std::move(options), std::move(*store)));
    if (auto r = c->setup(); !r)
        return tl::unexpected(r.error());
    return c;
}

bool Collector::watch(const std::string &dir, std::uint32_t extra)
{
    for (const auto &w : watches_)
        if (w.second == dir)
            return true;
    int wd = ::inotify_add_watch(inotifyFd_.get(), dir.c_str(),
                                 IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM | extra);
    if (wd >= 0)
        watches_[wd] = dir;
    else
        spdlog::debug("inotify {}: {}", dir, Error::errnoName(errno));
    return wd >= 0;
}

// libvirt creates its channel directory when the first VM with a channel
// starts, possibly long after the collector: while a --watch-dir is missing,
// the deepest ancestor that exists is watched, and every event there retries.
void Collector::armWatchDir(const std::string &dir)
{
    // A component created between a failed watch and the ancestor's watch
    // sent its event to nobody: look again, and go deeper if it is there.
    for (int round = 0; round < 256; ++round) {
        if (watch(dir, IN_ONLYDIR)) {
            if (missingDirs_.erase(dir))
                spdlog::info("watch dir {} appeared: watching it", dir);
            return;
        }
        std::string child = dir, ancestor = parentDir(dir);
        while (!watch(ancestor, IN_ONLYDIR) && ancestor != "/" && ancestor != ".") {
            child = ancestor;
            ancestor = parentDir(ancestor);
        }
        struct stat st {
        };
        if (::stat(child.c_str(), &st) == 0)
            continue;
        if (missingDirs_.insert(dir).second)
            spdlog::warn("watch dir {} does not exist (yet): watching {} for it", dir, ancestor);
        return;
    }
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

void Collector::addChannel(const ChannelConfig &config)
{
    if (channels_.count(config.name))
        return;
    if (channels_.size() >= options_.maxChannels) {
        spdlog::warn("channel limit {} reached: ignoring {}", options_.maxChannels,
                     config.socketPath);
        return;
    }
    channels_.try_emplace(config.name, config,
                          ChannelEnv{store_, *metrics_, options_, syncCounter_});
    metrics_->update(config.name, [](VmMetrics &) {});
}

void Collector::scanWatchDirs(std::int64_t now)
{
    if (options_.watchDirs.empty())
        return;
    // A socket we are connected to is live: no probe connection to it (QEMU
    // would queue the probe and replay it to the guest as a host blip).
    auto live = [this](const std::string &path) {
        for (const auto &[name, c] : channels_)
            if (c.connected() && c.config().socketPath == path)
                return true;
        return socketAcceptsConnections(path);
    };
    Discovery found = discoverSockets(options_.watchDirs, options_.watchName, live);
    std::size_t before = watches_.size();
    for (const auto &dir : found.subdirs)
        watch(dir, 0); // libvirt: <dir>/domain-N-NAME/<channel name>
    // A socket created in a new subdir before its watch existed raised no
    // event: list again now that every subdir is watched.
    if (watches_.size() > before)
        found = discoverSockets(options_.watchDirs, options_.watchName, live);
    for (auto &[name, cfg] : found.channels) {
        auto why = found.why.find(name);
        auto it = channels_.find(name);
        if (it == channels_.end()) {
            spdlog::info("discovered {} at {}{}", name, cfg.socketPath,
                         why == found.why.end() ? "" : " (" + why->second + ")");
            addChannel(cfg);
            continue;
        }
        Channel &c = it->second;
        if (c.config().discovered && c.config().socketPath != cfg.socketPath && !c.connected()) {
            spdlog::info("{}: now at {}{}", name, cfg.socketPath,
                         why == found.why.end() ? " (same VM, new domain id)"
                                                : " (" + why->second + ")");
            c.config().socketPath = cfg.socketPath;
            c.nextAttemptMs = now;
        } else if (!c.connected() && c.throttledUntilMs <= now) {
            c.nextAttemptMs = now;
        }
    }
    // A discovered VM whose socket went away is gone; configured ones stay.
    for (auto it = channels_.begin(); it != channels_.end();) {
        if (it->second.config().discovered && !it->second.connected() &&
            !found.channels.count(it->first)) {
            metrics_->remove(it->first);
            it = channels_.erase(it);
        } else {
            ++it;
        }
    }
}

void Collector::handleInotify(std::int64_t now)
{
    alignas(inotify_event) char buf[16384];
    bool any = false;
    for (;;) {
        ssize_t n = ::read(inotifyFd_.get(), buf, sizeof(buf));
        if (n <= 0)
            break;
        any = true;
        for (char *p = buf; p < buf + n;) {
            auto *ev = reinterpret_cast<inotify_event *>(p);
            if (ev->mask & IN_IGNORED)
                watches_.erase(ev->wd);
            p += sizeof(inotify_event) + ev->len;
        }
    }
    if (!any)
        return;
    // A watched dir removed (its watch is gone) or a missing one created.
    for (const auto &d : options_.watchDirs)
        armWatchDir(d);
    for (auto &[name, c] : channels_)
        if (!c.config().discovered && !c.connected() && c.throttledUntilMs <= now &&
            isSocket(c.config().socketPath))
            c.nextAttemptMs = now;
    scanWatchDirs(now);
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
    if (auto r = store_.setHostFacts(c.config().name, toJson(facts)); !r)
        spdlog::debug("{}: {}", c.config().name, r.error().describe());
    metrics_->update(c.config().name, [&](VmMetrics &m) { m.qemu = std::move(facts); });
}

Result<void> Collector::runOnce(int maxWaitMs)
{
    std::int64_t now = nowMs();
    for (auto &[name, c] : channels_)
        if (!c.connected() && now >= c.nextAttemptMs)
            c.tryConnect(now);

    std::vector<pollfd> fds;
    std::vector<Channel *> owners;
    auto add = [&](int fd, short ev, Channel *ch) {
        fds.push_back({fd, ev, 0});
        owners.push_back(ch);
    };
    if (signalFd_)
        add(signalFd_.get(), POLLIN, nullptr);
    add(inotifyFd_.get(), POLLIN, nullptr);
    std::int64_t deadline = now + 3600 * 1000;
    for (auto &[name, c] : channels_) {
        deadline = std::min(deadline, c.nextDeadline(now));
        if (!c.connected())
            continue;
        if (c.busy() && c.throttledUntilMs <= now)
            deadline = now; // lines left from the last turn: no sleeping
        short ev =
            static_cast<short>((c.wantsInput(now) ? POLLIN : 0) | (c.wantsOutput() ? POLLOUT : 0));
        add(c.fd(), ev, &c);
    }
    std::int64_t wait = std::max<std::int64_t>(0, deadline - now);
    if (maxWaitMs >= 0)
        wait = std::min<std::int64_t>(wait, maxWaitMs);

    if (::poll(fds.data(), fds.size(), static_cast<int>(wait)) < 0) {
        if (errno == EINTR)
            return {};
        return failf(errno, "poll");
    }
    now = nowMs();
    for (std::size_t i = 0; i < fds.size(); ++i) {
        if (owners[i] || !fds[i].revents)
            continue;
        if (fds[i].fd == inotifyFd_.get()) {
            handleInotify(now);
        } else {
            signalfd_siginfo si{};
            while (::read(signalFd_.get(), &si, sizeof(si)) == static_cast<ssize_t>(sizeof(si)))
                stopping_ = true;
        }
    }
    if (stopping_)
        return {}; // promptly: no further turns once asked to stop

    std::size_t buffered = bufferedBytes();
    for (std::size_t i = 0; i < fds.size(); ++i) {
        Channel *c = owners[i];
        if (!c || !c->connected() || c->fd() != fds[i].fd)
            continue; // the channel may have been hung up on (memory) this wake
        short r = fds[i].revents;
        if (r & POLLIN) { // data first: a hangup may follow the last report
            if (buffered >= options_.maxBufferedBytes)
                buffered = relieveMemory(now);
            std::size_t before = c->bufferedBytes();
            if (c->connected())
                c->onReadable(now, options_.maxBufferedBytes -
                                       std::min(buffered, options_.maxBufferedBytes));
            buffered = buffered - before + c->bufferedBytes();
        } else if ((r & (POLLHUP | POLLERR)) && (!c->busy() || c->throttledUntilMs > now)) {
            // Its queued lines are handled first, unless it is paused anyway.
            c->disconnect("hangup", false, now);
        }
    }
    for (auto &[name, c] : channels_) {
        c.step(now);
        if (c.connected() && c.nextFactsMs && now >= c.nextFactsMs)
            refreshFacts(c, now);
    }
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
