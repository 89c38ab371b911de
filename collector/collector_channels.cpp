// The collector's set of guests: configured sockets, directories watched
// for VMs coming and going (inotify), and the limit on how many it serves.
#include <cerrno>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "collector/collector.h"
#include "collector/discovery.h"

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

} // namespace

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

void Collector::addChannel(const ChannelConfig &config)
{
    if (channels_.count(config.name))
        return;
    if (channels_.size() >= options_.maxChannels) {
        spdlog::warn("guest limit {} reached (--max-guests): ignoring {}", options_.maxChannels,
                     config.socketPath);
        return;
    }
    channels_.try_emplace(config.name, config,
                          ChannelEnv{store_, *metrics_, options_, syncCounter_, epollFd_.get()});
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

} // namespace daxprobe::collector
