#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "ingest.h"
#include "metrics.h"
#include "options.h"
#include "store.h"
#include "unique_fd.h"

namespace daxprobe::collector
{

// A refilling allowance (bytes or messages per second) for one guest.
struct TokenBucket {
    double rate = 0, burst = 0, tokens = 0;
    std::int64_t lastMs = 0;
    void refill(std::int64_t nowMs);
    // Milliseconds until `amount` tokens are available (0: now).
    std::int64_t waitFor(double amount) const;
};

struct Channel {
    ChannelConfig config;
    UniqueFD fd;
    std::unique_ptr<Ingestor> ingestor;
    std::string out; // bytes owed to the agent (acks, commands)
    std::int64_t nextAttemptMs = 0;
    int backoffMs = 0;
    std::int64_t throttledUntilMs = 0;
    std::int64_t nextFactsMs = 0;
    TokenBucket bytes, messages;
    int peerPid = 0;
    IngestStats seen; // ingestor stats already added to the metrics
};

// The host side: one poll() loop over every guest channel, the inotify
// watches and a signalfd. Single-threaded except for the HTTP server, which
// only reads the metrics registry.
class Collector
{
  public:
    static Result<std::unique_ptr<Collector>> create(CollectorOptions options);
    ~Collector();

    Result<void> runOnce(int maxWaitMs = -1);
    int run();
    void stop() { stopping_ = true; }

    Store &store() { return store_; }
    MetricsRegistry &metrics() { return *metrics_; }
    const std::map<std::string, Channel> &channels() const { return channels_; }
    bool connected(const std::string &vm) const;
    // Bound port of /metrics (useful with port 0), 0 when disabled.
    int metricsPort() const { return metricsPort_; }

  private:
    Collector(CollectorOptions options, Store store);
    Result<void> setup();
    void addChannel(const ChannelConfig &config);
    void tryConnect(Channel &c, std::int64_t now);
    void disconnect(Channel &c, const std::string &reason, bool penalty, std::int64_t now);
    void readChannel(Channel &c, std::int64_t now);
    void flushChannel(Channel &c, std::int64_t now);
    void refreshFacts(Channel &c, std::int64_t now);
    void handleInotify(std::int64_t now);
    void scanWatchDirs(std::int64_t now);
    void startMetricsServer();

    CollectorOptions options_;
    Store store_;
    std::unique_ptr<MetricsRegistry> metrics_;
    std::map<std::string, Channel> channels_;
    UniqueFD signalFd_, inotifyFd_;
    std::map<int, std::string> watches_; // inotify wd -> directory
    bool stopping_ = false;
    std::int64_t syncCounter_ = 0;
    std::uint64_t storeErrors_ = 0;
    struct Http;
    std::unique_ptr<Http> http_;
    int metricsPort_ = 0;
};

std::int64_t nowMs();

} // namespace daxprobe::collector
