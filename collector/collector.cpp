#include "collector.h"

#include <cerrno>
#include <csignal>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <thread>
#include <vector>

#include <httplib.h>
#include <spdlog/spdlog.h>

namespace daxprobe::collector
{

std::int64_t nowMs()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

namespace
{

// Acks and commands owed to a guest that does not read them: a bound, not a backlog.
constexpr std::size_t kMaxOwedBytes = 1 << 20;

std::int64_t wallSeconds()
{
    return static_cast<std::int64_t>(::time(nullptr));
}

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

std::vector<std::string> listDir(const std::string &dir)
{
    std::vector<std::string> out;
    if (DIR *d = ::opendir(dir.c_str())) {
        while (dirent *e = ::readdir(d))
            if (e->d_name[0] != '.')
                out.emplace_back(e->d_name);
        ::closedir(d);
    }
    std::sort(out.begin(), out.end());
    return out;
}

// libvirt names channel dirs "domain-<id>-<name>"; the id changes per start,
// the name does not, so the name keeps one VM's history together.
std::string vmNameFromDir(const std::string &sub)
{
    if (sub.rfind("domain-", 0) == 0) {
        auto dash = sub.find('-', 7);
        if (dash != std::string::npos && dash > 7 && sub.find_first_not_of("0123456789", 7) == dash)
            return sub.substr(dash + 1);
    }
    return sub;
}

} // namespace

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
    return static_cast<std::int64_t>((amount - tokens) * 1000.0 / rate) + 1;
}

struct Collector::Http {
    httplib::Server server;
    std::thread thread;
};

Collector::Collector(CollectorOptions options, Store store)
    : options_(std::move(options)), store_(std::move(store)),
      metrics_(std::make_unique<MetricsRegistry>())
{
}

Collector::~Collector()
{
    if (http_) {
        http_->server.stop();
        if (http_->thread.joinable())
            http_->thread.join();
    }
}

Result<std::unique_ptr<Collector>> Collector::create(CollectorOptions options)
{
    if (options.stateDir.empty())
        options.stateDir = defaultStateDir();
    if (::mkdir(options.stateDir.c_str(), 0750) < 0 && errno != EEXIST)
        return failf(errno, "create state directory {}", options.stateDir);
    auto store = Store::open(options.stateDir + "/collector.db",
                             StoreOptions{options.maxRowsPerVm, options.maxBytesPerVm});
    if (!store)
        return tl::unexpected(store.error());
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
    }
    inotifyFd_.reset(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
    if (!inotifyFd_)
        return failf(errno, "inotify_init1");

    auto watch = [&](const std::string &dir) {
        int wd =
            ::inotify_add_watch(inotifyFd_.get(), dir.c_str(),
                                IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM | IN_ONLYDIR);
        if (wd >= 0)
            watches_[wd] = dir;
        else
            spdlog::debug("inotify {}: {}", dir, Error::errnoName(errno));
    };
    for (const auto &s : options_.sockets) {
        addChannel(s);
        // A VM restart recreates its socket: reconnect at once, not at the next backoff.
        watch(parentDir(s.socketPath));
    }
    for (const auto &d : options_.watchDirs)
        watch(d);
    scanWatchDirs(nowMs());
    startMetricsServer();
    return {};
}

void Collector::startMetricsServer()
{
    if (options_.metricsListen.empty())
        return;
    auto colon = options_.metricsListen.rfind(':');
    std::string host =
        colon == std::string::npos ? "127.0.0.1" : options_.metricsListen.substr(0, colon);
    int port = std::atoi(
        options_.metricsListen.substr(colon == std::string::npos ? 0 : colon + 1).c_str());
    http_ = std::make_unique<Http>();
    MetricsRegistry *reg = metrics_.get();
    http_->server.Get("/metrics", [reg](const httplib::Request &, httplib::Response &res) {
        res.set_content(reg->render(), "text/plain; version=0.0.4; charset=utf-8");
    });
    http_->server.set_read_timeout(5, 0);
    http_->server.set_write_timeout(5, 0);
    metricsPort_ = port == 0 ? http_->server.bind_to_any_port(host)
                             : (http_->server.bind_to_port(host, port) ? port : -1);
    if (metricsPort_ <= 0) {
        spdlog::error("metrics: cannot listen on {}", options_.metricsListen);
        http_.reset();
        metricsPort_ = 0;
        return;
    }
    http_->thread = std::thread([h = http_.get()] { h->server.listen_after_bind(); });
    spdlog::info("metrics on http://{}:{}/metrics", host, metricsPort_);
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
    Channel c;
    c.config = config;
    c.backoffMs = options_.backoffInitialMs;
    channels_.emplace(config.name, std::move(c));
    metrics_->update(config.name, [](VmMetrics &) {});
}

void Collector::scanWatchDirs(std::int64_t now)
{
    std::map<std::string, ChannelConfig> found;
    auto consider = [&](const std::string &path, const std::string &name) {
        if (isSocket(path))
            found[name] = ChannelConfig{name, path, {}, true};
    };
    const std::string &want = options_.watchName;
    for (const auto &dir : options_.watchDirs) {
        for (const auto &entry : listDir(dir)) {
            std::string path = dir + "/" + entry;
            struct stat st {
            };
            if (::stat(path.c_str(), &st) < 0)
                continue;
            if (S_ISDIR(st.st_mode)) {
                // libvirt: <dir>/domain-N-NAME/<channel name>
                bool known = std::any_of(watches_.begin(), watches_.end(),
                                         [&](const auto &w) { return w.second == path; });
                if (!known) {
                    int wd =
                        ::inotify_add_watch(inotifyFd_.get(), path.c_str(),
                                            IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM);
                    if (wd >= 0)
                        watches_[wd] = path;
                }
                for (const auto &f : listDir(path))
                    if (want == "*" || f == want)
                        consider(path + "/" + f, vmNameFromDir(entry));
            } else if (want == "*") {
                consider(path, entry);
            } else if (entry.size() > want.size() + 1 &&
                       entry.compare(entry.size() - want.size(), want.size(), want) == 0 &&
                       entry[entry.size() - want.size() - 1] == '.') {
                // older libvirt: <dir>/NAME.<channel name>
                consider(path, entry.substr(0, entry.size() - want.size() - 1));
            }
        }
    }
    for (auto &[name, cfg] : found) {
        auto it = channels_.find(name);
        if (it == channels_.end()) {
            spdlog::info("discovered {} at {}", name, cfg.socketPath);
            addChannel(cfg);
        } else if (it->second.config.discovered && it->second.config.socketPath != cfg.socketPath &&
                   !it->second.fd) {
            it->second.config.socketPath = cfg.socketPath; // same VM, new domain id
            it->second.nextAttemptMs = now;
        } else if (!it->second.fd && it->second.throttledUntilMs <= now) {
            it->second.nextAttemptMs = now;
        }
    }
    // A discovered VM whose socket went away is gone; configured ones stay.
    for (auto it = channels_.begin(); it != channels_.end();) {
        if (it->second.config.discovered && !it->second.fd && !found.count(it->first)) {
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
    for (auto &[name, c] : channels_)
        if (!c.config.discovered && !c.fd && c.throttledUntilMs <= now &&
            isSocket(c.config.socketPath))
            c.nextAttemptMs = now;
    scanWatchDirs(now);
}

bool Collector::connected(const std::string &vm) const
{
    auto it = channels_.find(vm);
    return it != channels_.end() && it->second.fd.isValid();
}

void Collector::tryConnect(Channel &c, std::int64_t now)
{
    sockaddr_un addr{};
    const std::string &path = c.config.socketPath;
    auto retry = [&](int err) {
        spdlog::debug("{}: connect {}: {}", c.config.name, path, Error::errnoName(err));
        c.nextAttemptMs = now + c.backoffMs;
        c.backoffMs = std::min(c.backoffMs * 2, options_.backoffMaxMs);
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

    c.fd = std::move(fd);
    c.backoffMs = options_.backoffInitialMs;
    c.out.clear();
    c.bytes = {options_.bytesPerSecond, options_.burstBytes, 0, 0};
    c.messages = {options_.messagesPerSecond, options_.burstMessages, 0, 0};
    c.bytes.refill(now);
    c.messages.refill(now);
    c.seen = {};

    // The peer of a QEMU chardev socket is QEMU itself.
    ucred cred{};
    socklen_t len = sizeof(cred);
    c.peerPid = ::getsockopt(c.fd.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 ? cred.pid : 0;

    const std::string vm = c.config.name;
    const std::string socket = path;
    IngestHooks hooks;
    hooks.storeReport = [this, vm](const protocol::ReportEnvelope &r) -> Result<bool> {
        auto stored = store_.addReport(vm, r, wallSeconds());
        if (!stored) {
            ++storeErrors_;
            metrics_->setStoreErrors(storeErrors_);
            spdlog::error("{}: store report {}: {}", vm, r.seq, stored.error().describe());
            return stored;
        }
        // One line per report: operators (and the VM test) follow the stream.
        if (*stored)
            spdlog::info("{}: stored report {}/{} ({}, {})", vm, r.stream, r.seq, r.reason,
                         verdictCode(r.report));
        else
            spdlog::debug("{}: report {}/{} already stored", vm, r.stream, r.seq);
        if (*stored)
            metrics_->update(vm, [&](VmMetrics &m) {
                MetricsRegistry::applyReport(m, r.report, wallSeconds());
                m.agentDropped = r.droppedReports;
            });
        return stored;
    };
    hooks.identity = [this, vm, socket](const protocol::AgentIdentity &id) {
        if (auto r = store_.noteVm(vm, socket, id, wallSeconds()); !r)
            spdlog::error("{}: {}", vm, r.error().describe());
    };
    c.ingestor = std::make_unique<Ingestor>(options_.ingest, std::move(hooks));
    c.ingestor->start(++syncCounter_);
    c.out += c.ingestor->takeOutput();
    metrics_->update(vm, [](VmMetrics &m) {
        m.connected = true;
        ++m.connects;
    });
    spdlog::info("{}: connected to {} (qemu pid {})", vm, path, c.peerPid);
    c.nextFactsMs = now;
    flushChannel(c, now);
}

void Collector::disconnect(Channel &c, const std::string &reason, bool penalty, std::int64_t now)
{
    if (!c.fd)
        return;
    spdlog::info("{}: disconnected ({})", c.config.name, reason);
    c.fd.reset();
    c.ingestor.reset();
    c.out.clear();
    c.nextAttemptMs = now + (penalty ? options_.penaltyMs : c.backoffMs);
    c.throttledUntilMs = penalty ? c.nextAttemptMs : 0;
    metrics_->update(c.config.name, [&](VmMetrics &m) {
        m.connected = false;
        ++m.disconnects[reason];
    });
}

void Collector::readChannel(Channel &c, std::int64_t now)
{
    c.bytes.refill(now);
    c.messages.refill(now);
    // Read no more than the guest's allowance and the per-wake chunk, so one
    // guest can neither starve the others nor make us buffer without bound.
    std::size_t want =
        std::min<std::size_t>(options_.readChunk, static_cast<std::size_t>(c.bytes.tokens));
    if (want == 0) {
        c.throttledUntilMs = now + std::max<std::int64_t>(1, c.bytes.waitFor(1));
        metrics_->update(c.config.name, [](VmMetrics &m) { ++m.throttled; });
        return;
    }
    std::string buf(want, '\0');
    ssize_t n = ::read(c.fd.get(), buf.data(), want);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0)
        return disconnect(c, n == 0 ? "eof" : "read_error", false, now);
    c.bytes.tokens -= double(n);
    c.ingestor->feed(std::string_view(buf.data(), static_cast<std::size_t>(n)));
    c.out += c.ingestor->takeOutput();
    if (c.out.size() > kMaxOwedBytes)
        return disconnect(c, "peer_not_reading", true, now);

    // Ingestor stats are per connection; the metrics are for the VM's life.
    const IngestStats st = c.ingestor->stats();
    const IngestStats d{st.messages - c.seen.messages,
                        st.reports - c.seen.reports,
                        st.stored - c.seen.stored,
                        st.duplicates - c.seen.duplicates,
                        st.invalid - c.seen.invalid,
                        0,
                        0};
    c.seen = st;
    c.messages.tokens -= double(d.messages);
    metrics_->update(c.config.name, [&](VmMetrics &m) {
        m.bytes += static_cast<std::uint64_t>(n);
        m.messages += d.messages;
        m.reports += d.reports;
        m.stored += d.stored;
        m.duplicates += d.duplicates;
        m.invalid += d.invalid;
    });
    if (const auto &v = c.ingestor->violation()) {
        spdlog::warn("{}: {}", c.config.name, *v);
        return disconnect(c, "violation", true, now);
    }
    if (c.bytes.tokens < 1 || c.messages.tokens < 1) {
        c.throttledUntilMs = now + std::max(c.bytes.waitFor(1), c.messages.waitFor(1));
        metrics_->update(c.config.name, [](VmMetrics &m) { ++m.throttled; });
    }
    if (c.nextFactsMs && now >= c.nextFactsMs)
        refreshFacts(c, now);
    flushChannel(c, now);
}

void Collector::flushChannel(Channel &c, std::int64_t now)
{
    while (c.fd && !c.out.empty()) {
        ssize_t n = ::send(c.fd.get(), c.out.data(), c.out.size(), MSG_NOSIGNAL);
        if (n > 0) {
            c.out.erase(0, static_cast<std::size_t>(n));
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        return disconnect(c, "write_error", false, now);
    }
}

void Collector::refreshFacts(Channel &c, std::int64_t now)
{
    c.nextFactsMs = now + options_.hostFactsIntervalMs;
    int pid = c.peerPid;
    auto root = Root::open(options_.procRoot);
    if (!root)
        return;
    if (!c.config.pidfile.empty()) {
        auto sys = Root::open("/");
        if (auto txt = sys ? sys->readAttr(c.config.pidfile) : Result<std::string>(fail("no root")))
            pid = std::atoi(txt->c_str());
    }
    if (pid <= 0)
        return;
    QemuFacts facts = readQemuFacts(*root, pid);
    if (auto r = store_.setHostFacts(c.config.name, toJson(facts)); !r)
        spdlog::debug("{}: {}", c.config.name, r.error().describe());
    metrics_->update(c.config.name, [&](VmMetrics &m) { m.qemu = std::move(facts); });
}

Result<void> Collector::runOnce(int maxWaitMs)
{
    std::int64_t now = nowMs();
    for (auto &[name, c] : channels_)
        if (!c.fd && now >= c.nextAttemptMs)
            tryConnect(c, now);

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
        if (!c.fd) {
            deadline = std::min(deadline, c.nextAttemptMs);
            continue;
        }
        short ev = c.out.empty() ? 0 : POLLOUT;
        if (c.throttledUntilMs > now)
            deadline = std::min(deadline, c.throttledUntilMs);
        else
            ev |= POLLIN;
        if (c.nextFactsMs)
            deadline = std::min(deadline, c.nextFactsMs);
        add(c.fd.get(), ev, &c);
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
        short r = fds[i].revents;
        Channel *c = owners[i];
        if (!c) {
            if (!r)
                continue;
            if (fds[i].fd == inotifyFd_.get()) {
                handleInotify(now);
            } else {
                signalfd_siginfo si{};
                while (::read(signalFd_.get(), &si, sizeof(si)) == static_cast<ssize_t>(sizeof(si)))
                    stopping_ = true;
            }
            continue;
        }
        if (!c->fd)
            continue;
        if (r & POLLIN)
            readChannel(*c, now); // data first: a hangup may follow the last report
        else if (r & (POLLHUP | POLLERR))
            disconnect(*c, "hangup", false, now);
        if (c->fd && (r & POLLOUT))
            flushChannel(*c, now);
        if (c->fd && c->nextFactsMs && now >= c->nextFactsMs)
            refreshFacts(*c, now);
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
