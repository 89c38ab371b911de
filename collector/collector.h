#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/unique_fd.h"
#include "collector/channel.h"
#include "collector/metrics.h"
#include "collector/metrics_server.h"
#include "collector/options.h"
#include "collector/store.h"

namespace daxprobe::collector
{

// The host side: one epoll loop over every guest channel, the inotify
// watches and a signalfd. Each wake commits every report that is ready, of
// every guest, in one transaction, then acks them. Single-threaded except
// for the /metrics server, which only reads the metrics registry.
class Collector
{
  public:
    static Result<std::unique_ptr<Collector>> create(CollectorOptions options);
    ~Collector();

    // One wake: connect what is due, wait for events, then give every
    // channel with work one bounded turn (at most maxMessagesPerWake
    // messages each), commit the wake's reports, ack them.
    Result<void> runOnce(int maxWaitMs = -1);
    int run();
    void stop() { stopping_ = true; }
    bool stopping() const { return stopping_; }

    Store &store() { return store_; }
    MetricsRegistry &metrics() { return *metrics_; }
    const std::map<std::string, Channel> &channels() const { return channels_; }
    bool connected(const std::string &vm) const;
    // Bound port of /metrics (useful with port 0), 0 when disabled.
    int metricsPort() const { return server_ ? server_->port() : 0; }
    // Partial and queued lines of every guest: bounded by maxBufferedBytes.
    std::size_t bufferedBytes() const;

  private:
    Collector(CollectorOptions options, Store store);
    Result<void> setup();
    void addChannel(const ChannelConfig &config);
    void refreshFacts(Channel &c, std::int64_t now);
    void handleInotify(std::int64_t now);
    bool watch(const std::string &dir, std::uint32_t extra);
    void armWatchDir(const std::string &dir);
    void scanWatchDirs(std::int64_t now);
    std::size_t relieveMemory(std::int64_t now);
    void readAndHandle(std::vector<Channel *> &turn, std::int64_t now);
    std::int64_t waitMs(std::int64_t now, int maxWaitMs) const;

    CollectorOptions options_;
    Store store_;
    std::unique_ptr<MetricsRegistry> metrics_;
    std::map<std::string, Channel> channels_;
    UniqueFD signalFd_, inotifyFd_, epollFd_;
    std::map<int, std::string> watches_; // inotify wd -> directory
    std::set<std::string> missingDirs_;  // --watch-dir not there yet: its ancestor is watched
    bool stopping_ = false;
    std::int64_t syncCounter_ = 0;
    std::unique_ptr<MetricsServer> server_;
};

} // namespace daxprobe::collector
