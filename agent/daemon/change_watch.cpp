#include "agent/daemon/change_watch.h"

#include <linux/netlink.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <limits>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "agent/daemon/uevent_namespace.h"
#include "base/text_escape.h"
#include "probes/readers/uevent.h"

namespace daxprobe
{

namespace
{

constexpr std::uint32_t kNetlinkTag = 0; // epoll data: 0 netlink, i + 1 files_[i]
constexpr std::size_t kNamedPerBurst = 4;
constexpr std::size_t kMaxBadblocksBytes = 4096; // badblocks_show fills one page

std::string lastPart(const std::string &path)
{
    return path.substr(path.rfind('/') + 1);
}

} // namespace

ChangeWatch::ChangeWatch(Root root, const ChangeWatchOptions &options)
    : root_(std::move(root)), options_(options)
{
}

std::unique_ptr<ChangeWatch> ChangeWatch::create(Root root, const ChangeWatchOptions &options)
{
    std::unique_ptr<ChangeWatch> w(new ChangeWatch(std::move(root), options));
    w->epollFd_.reset(::epoll_create1(EPOLL_CLOEXEC));
    if (!w->epollFd_) {
        spdlog::warn("device changes not watched (epoll_create1: {}); they wait for the "
                     "periodic re-check",
                     Error::errnoName(errno));
        return w;
    }
    if (options.uevents)
        w->openNetlink();
    w->rescanBadblocks(0, false);
    return w;
}

void ChangeWatch::openNetlink()
{
    if (auto why = ueventsNotDelivered()) { // bind() would succeed, and hear nothing
        spdlog::warn("kernel device events not watched ({}): namespace and region changes "
                     "wait for the periodic re-check",
                     *why);
        return;
    }
    UniqueFD fd(
        ::socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT));
    sockaddr_nl addr{};
    addr.nl_family = AF_NETLINK;
    addr.nl_groups = 1; // the kernel's own events (udev re-broadcasts on group 2)
    if (!fd || ::bind(fd.get(), reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) < 0) {
        spdlog::warn("kernel device events not watched ({} NETLINK_KOBJECT_UEVENT: {}): "
                     "namespace and region changes wait for the periodic re-check",
                     fd ? "bind" : "socket", Error::errnoName(errno));
        return;
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = kNetlinkTag;
    if (::epoll_ctl(epollFd_.get(), EPOLL_CTL_ADD, fd.get(), &ev) < 0) {
        spdlog::warn("kernel device events not watched (epoll_ctl: {})", Error::errnoName(errno));
        return;
    }
    netlinkFd_ = std::move(fd);
}

// The files the kernel notifies (sysfs_notify_dirent on bb_state): a pmem
// disk's when its list is revalidated or poison is cleared
// (drivers/nvdimm/pmem.c), a region's after a scrub
// (drivers/nvdimm/region.c nd_region_notify). A write to a disk's badblocks
// file (block/genhd.c disk_badblocks_store) notifies nobody: the poll covers it.
// A file kept from the last scan is read again first: a disk removed and
// added again under its name (create-namespace -f does it in one burst)
// leaves a dead file at the same path, which a removal does not wake and
// which would hide the new disk's notifications.
void ChangeWatch::rescanBadblocks(std::int64_t nowMs, bool announce)
{
    std::vector<std::string> paths;
    if (auto disks = root_.listDir("sys/block"))
        for (const auto &d : *disks)
            if (d.starts_with("pmem"))
                paths.push_back("sys/block/" + d + "/badblocks");
    if (auto devs = root_.listDir("sys/bus/nd/devices"))
        for (const auto &d : *devs)
            if (d.starts_with("region"))
                paths.push_back("sys/bus/nd/devices/" + d + "/badblocks");
    std::sort(paths.begin(), paths.end());

    auto changed = [&](const std::string &path, const char *how) {
        if (announce)
            note(nowMs, fmt::format("/{} {}", path, how));
    };
    char buf[kMaxBadblocksBytes];
    std::vector<BadblocksFile> files;
    for (auto &p : paths) {
        auto old = std::find_if(files_.begin(), files_.end(),
                                [&](const BadblocksFile &f) { return f.path == p; });
        bool known = old != files_.end() && old->fd;
        ssize_t n = known ? ::pread(old->fd.get(), buf, sizeof(buf), 0) : -1;
        if (n >= 0) {
            // Alive. The read also ends a pending notification: compare here.
            std::string_view now(buf, static_cast<std::size_t>(n));
            if (now != old->content) {
                old->content = now;
                changed(old->path, "changed");
            }
            files.push_back(std::move(*old));
            continue;
        }
        auto fd = root_.openForRead(p);
        if (!fd)
            continue; // a region without badblocks (not pmem), or gone already
        BadblocksFile f{std::move(p), std::move(*fd), {}};
        n = ::pread(f.fd.get(), buf, sizeof(buf), 0);
        f.content.assign(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
        changed(f.path, known ? "replaced" : "appeared");
        files.push_back(std::move(f));
    }
    for (auto &f : files_) { // closed below, and a closed fd leaves the epoll set
        if (!f.fd)
            continue; // kept above, or dropped (and noted) by readBadblocks
        ::epoll_ctl(epollFd_.get(), EPOLL_CTL_DEL, f.fd.get(), nullptr);
        if (std::find_if(files.begin(), files.end(),
                         [&](const BadblocksFile &g) { return g.path == f.path; }) == files.end())
            changed(f.path, "gone");
    }
    files_ = std::move(files);
    for (std::size_t i = 0; i < files_.size(); ++i) {
        epoll_event ev{};
        ev.events = EPOLLPRI; // kernfs: POLLPRI|POLLERR once notified, until re-read
        ev.data.u32 = static_cast<std::uint32_t>(i + 1);
        ::epoll_ctl(epollFd_.get(), EPOLL_CTL_ADD, files_[i].fd.get(), &ev); // kept: EEXIST
    }
}

void ChangeWatch::note(std::int64_t nowMs, std::string what)
{
    if (firstMs_ == 0)
        firstMs_ = nowMs;
    lastMs_ = nowMs;
    if (std::find(what_.begin(), what_.end(), what) != what_.end())
        return; // the same again (a file polled twice in one burst)
    if (what_.size() < kNamedPerBurst)
        what_.push_back(std::move(what));
    ++whatCount_;
}

void ChangeWatch::readUevents(std::int64_t nowMs)
{
    char buf[kMaxUeventBytes + 1];
    for (int i = 0; i < 256; ++i) { // level-triggered: the rest wakes us again
        sockaddr_nl from{};
        iovec iov{buf, sizeof(buf)};
        msghdr msg{};
        msg.msg_name = &from;
        msg.msg_namelen = sizeof(from);
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        ssize_t n = ::recvmsg(netlinkFd_.get(), &msg, MSG_TRUNC);
        if (n < 0) {
            if (errno == ENOBUFS) // the kernel dropped some: something changed
                note(nowMs, "uevents lost (ENOBUFS)");
            if (errno == ENOBUFS || errno == EINTR)
                continue;
            return; // EAGAIN: drained
        }
        if (from.nl_pid != 0) // only the kernel speaks on group 1
            continue;
        auto ev = parseUevent(std::string_view(buf, std::min<std::size_t>(n, sizeof(buf))));
        if (!ev) {
            spdlog::debug("uevent ignored: {}", ev.error().describe());
            continue;
        }
        if (!isPmemUevent(*ev))
            continue;
        if (ev->action == "add" || ev->action == "remove" || ev->action == "bind" ||
            ev->action == "unbind")
            rescan_ = true;
        note(nowMs, fmt::format("uevent {} {} {}", printable(ev->action), printable(ev->subsystem),
                                printable(lastPart(ev->devpath))));
    }
}

void ChangeWatch::readBadblocks(std::int64_t nowMs)
{
    for (auto &f : files_) {
        char buf[kMaxBadblocksBytes];
        if (!f.fd)
            continue;
        ssize_t n = ::pread(f.fd.get(), buf, sizeof(buf), 0);
        if (n < 0) {
            // Its device is gone (ENODEV): kernfs now polls EPOLLERR for
            // good, so it leaves the set at once, not at the next rescan.
            ::epoll_ctl(epollFd_.get(), EPOLL_CTL_DEL, f.fd.get(), nullptr);
            f.fd.reset();
            rescan_ = true;
            note(nowMs, fmt::format("/{} gone", f.path));
            continue;
        }
        std::string_view now(buf, static_cast<std::size_t>(n));
        if (now != f.content) {
            f.content = now;
            note(nowMs, fmt::format("/{} changed", f.path));
        }
    }
}

void ChangeWatch::onReadable(std::int64_t nowMs)
{
    std::array<epoll_event, 16> evs{};
    int n = ::epoll_wait(epollFd_.get(), evs.data(), evs.size(), 0);
    bool files = false;
    for (int i = 0; i < n; ++i) {
        if (evs[i].data.u32 == kNetlinkTag)
            readUevents(nowMs);
        else
            files = true;
    }
    // A notified file stays readable for epoll until re-read: read them all.
    if (files)
        readBadblocks(nowMs);
}

// The files are re-read while there are any; without uevents also to find
// new ones.
bool ChangeWatch::polling() const
{
    return options_.badblocksPollMs > 0 && (!files_.empty() || !netlinkFd_);
}

std::int64_t ChangeWatch::deadlineMs() const
{
    std::int64_t d = std::numeric_limits<std::int64_t>::max();
    if (firstMs_ != 0)
        d = std::min(lastMs_ + options_.quietMs, firstMs_ + options_.maxDelayMs);
    if (polling())
        d = std::min(d, nextPollMs_);
    return d;
}

std::string ChangeWatch::takeDue(std::int64_t nowMs)
{
    if (polling() && nowMs >= nextPollMs_) {
        if (netlinkFd_)
            readBadblocks(nowMs);
        else // no uevent says when a disk comes or goes: it reads them too
            rescanBadblocks(nowMs, true);
        nextPollMs_ = nowMs + options_.badblocksPollMs;
    }
    if (firstMs_ == 0 ||
        nowMs < std::min(lastMs_ + options_.quietMs, firstMs_ + options_.maxDelayMs))
        return {};
    if (rescan_) { // the uevents named the change: the check below covers it
        rescan_ = false;
        rescanBadblocks(nowMs, false);
    }
    std::string what;
    for (const auto &w : what_)
        what += (what.empty() ? "" : ", ") + w;
    if (whatCount_ > what_.size())
        what += fmt::format(" and {} more", whatCount_ - what_.size());
    firstMs_ = lastMs_ = 0;
    what_.clear();
    whatCount_ = 0;
    return what;
}

} // namespace daxprobe
