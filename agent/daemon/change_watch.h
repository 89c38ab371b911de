#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/root.h"
#include "base/unique_fd.h"

namespace daxprobe
{

struct ChangeWatchOptions {
    bool uevents = true;       // NETLINK_KOBJECT_UEVENT, subsystems nd, dax, cxl, block
    int quietMs = 100;         // a burst ends after this long without an event ...
    int maxDelayMs = 300;      // ... or this long after its first event
    int badblocksPollMs = 250; // re-read the badblocks files (0: only their notifications)
};

// What tells the agent, between its timers, that the persistent memory
// changed: the kernel's device events and the badblocks files. One epoll fd
// holds them all, so the daemon waits on one more fd. Events are debounced:
// a burst (create-namespace sends a dozen) makes one check, due when the
// burst went quiet; the daemon waits for that deadline in its own epoll_wait.
class ChangeWatch
{
  public:
    // Never fails: what cannot be watched (netlink refused by a socket()
    // filter such as systemd's RestrictAddressFamilies=, no /sys) is a
    // warning, and the daemon keeps its periodic re-check and the badblocks
    // poll for it. So is a network namespace the kernel sends no uevents
    // (one owned by a user namespace other than the initial one: bind()
    // succeeds there and hears nothing; uevent_namespace.h,
    // tests/integration/agent_netlink_refused.py).
    static std::unique_ptr<ChangeWatch> create(Root root, const ChangeWatchOptions &options);
    ChangeWatch(const ChangeWatch &) = delete;
    ChangeWatch &operator=(const ChangeWatch &) = delete;

    int fd() const { return epollFd_.get(); } // readable when something arrived
    bool watchingUevents() const { return static_cast<bool>(netlinkFd_); }
    std::size_t badblocksFiles() const { return files_.size(); }

    // Drains what arrived (uevents, badblocks notifications).
    void onReadable(std::int64_t nowMs);
    // The next time takeDue() has something to do (a burst's end, a poll).
    std::int64_t deadlineMs() const;
    // When a burst has ended: what changed, for the log ("uevent add nd
    // namespace0.0, ..."); empty while nothing is due.
    std::string takeDue(std::int64_t nowMs);

  private:
    ChangeWatch(Root root, const ChangeWatchOptions &options);
    void openNetlink();
    // announce: note the files that appeared, went, were replaced or changed
    // (otherwise a check is due anyway).
    void rescanBadblocks(std::int64_t nowMs, bool announce);
    bool polling() const;
    void readUevents(std::int64_t nowMs);
    void readBadblocks(std::int64_t nowMs); // notes what differs from the last read
    void note(std::int64_t nowMs, std::string what);

    struct BadblocksFile {
        std::string path;
        UniqueFD fd;
        std::string content;
    };
    Root root_;
    ChangeWatchOptions options_;
    UniqueFD epollFd_;
    UniqueFD netlinkFd_;
    std::vector<BadblocksFile> files_;
    std::int64_t firstMs_ = 0, lastMs_ = 0; // the pending burst (0: none)
    std::int64_t nextPollMs_ = 0;
    std::vector<std::string> what_; // the pending burst's events, a few named
    std::size_t whatCount_ = 0;
    bool rescan_ = false; // a uevent may have added or removed a disk or region
};

} // namespace daxprobe
