#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "agent/daemon/agent_session.h"
#include "agent/daemon/change_watch.h"
#include "agent/daemon/listen_socket.h"
#include "base/result.h"
#include "base/safe_files.h"
#include "base/unique_fd.h"
#include "probes/readers/walk_bounds.h"

namespace daxprobe
{

struct DaemonOptions {
    std::string portName = "org.daxprobe.agent.0"; // virtio-serial port name
    std::string portPath;                          // explicit device path, skips the lookup by name
    std::string listenPath; // serve a unix socket instead (tests, no virtio-serial)
    std::string root = "/"; // where /dev, /sys, /etc are looked up
    std::string stateDir;   // each DIMM's last unsafe-shutdown count (--state-dir)
    unsigned intervalSeconds = 300;
    unsigned recheckSeconds = 60; // re-run the check; report at once if a verdict changed
    std::size_t maxPending = 64;
    bool handleSignals = true; // SIGTERM/SIGINT/SIGIO via signalfd (off in in-process tests)
    bool watchMounts = true;   // re-check when /proc/self/mountinfo changes
    bool watchDevices = true;  // re-check on nd/dax/cxl/block uevents and badblocks changes
    bool activeChecks = true;  // the check's MAP_SYNC probe (an unnamed O_TMPFILE)
    WalkBounds walk;           // the check's file walks (--walk-files, --walk-ms)
};

// The agent's event loop: one poll() over a signalfd, the mount table and the
// transport, with a timeout computed from the next deadline. It never spins
// while the host is away: a virtio port in POLLHUP is left out of the poll set
// and we wait for SIGIO (O_ASYNC: the port signals host open/close and data)
// or for the next timer.
class AgentDaemon
{
  public:
    static Result<std::unique_ptr<AgentDaemon>>
    create(const DaemonOptions &options, protocol::AgentIdentity identity, AgentHooks hooks);
    ~AgentDaemon();
    AgentDaemon(const AgentDaemon &) = delete;
    AgentDaemon &operator=(const AgentDaemon &) = delete;

    // One wait + handling. maxWaitMs caps the wait (-1: until the next deadline).
    Result<void> runOnce(int maxWaitMs = -1);
    // Until SIGTERM/SIGINT or stop(). Returns the process exit code.
    int run();
    void stop() { stopping_ = true; }
    bool stopping() const { return stopping_; }

    AgentSession &session() { return session_; }
    // Whether the port raises SIGIO now (tests: off while a host is connected).
    bool portAsync() const { return async_; }

  private:
    AgentDaemon(const DaemonOptions &options, protocol::AgentIdentity identity, AgentHooks hooks);
    Result<void> openTransport();
    void probePort();
    void setConnected(bool connected);
    void setAsync(bool on);
    // What epoll watches, by tag: registered once (signals, mounts, listener)
    // or as the connection changes (port, client).
    enum Tag : std::uint32_t { kSignal, kMounts, kChanges, kPort, kListen, kClient, kTags };
    void watch(Tag tag, int fd, std::uint32_t events);
    void readFrom(int fd);
    void flush();
    void closeClient();
    void acceptClient();
    void handleSignals();
    void runTimers();
    void recheckDevices();
    void logNewReports();

    DaemonOptions options_;
    AgentSession session_;
    std::string path_;
    UniqueFD signalFd_;
    UniqueFD mountsFd_;
    std::unique_ptr<ChangeWatch> changes_; // uevents, badblocks files
    UniqueFD portFd_;                      // virtio port: open for the daemon's whole life
    ListenSocket listen_;                  // --listen mode: removes only its own socket
    UniqueFD clientFd_;                    // --listen mode: at most one host at a time
    UniqueFD epollFd_;
    struct Watched {
        int fd = -1;
        std::uint32_t events = 0;
    };
    Watched watched_[kTags];
    bool stopping_ = false;
    bool async_ = false; // O_ASYNC on the port: only while no host is connected
    std::int64_t nextReportMs_ = 0;
    std::int64_t nextRecheckMs_ = 0;
    std::uint64_t loggedSeq_ = 0;
    // Bumped on every connect/disconnect: poll results from an older epoch are stale.
    std::uint64_t epoch_ = 0;
};

// Monotonic clock in milliseconds: deadlines survive wall-clock jumps.
std::int64_t monotonicMs();

} // namespace daxprobe
