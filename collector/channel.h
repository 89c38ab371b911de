#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/unique_fd.h"
#include "collector/ingest.h"
#include "collector/metrics.h"
#include "collector/options.h"
#include "collector/store.h"

namespace daxprobe::collector
{

// A refilling allowance (bytes or messages per second) for one guest.
struct TokenBucket {
    double rate = 0, burst = 0, tokens = 0;
    std::int64_t lastMs = 0;
    void refill(std::int64_t nowMs);
    // Milliseconds until `amount` tokens are available (0: now).
    std::int64_t waitFor(double amount) const;
    // The whole tokens there are, at most `cap`: a double is converted only
    // once it is known to fit (a cast of 2^64 or NaN is undefined).
    std::size_t whole(std::size_t cap) const;
};

// What every channel shares: the store, the metrics, the options, the
// epoll set its socket joins, and the sync id counter (ids are unique per
// collector, so a stale return never matches).
struct ChannelEnv {
    Store &store;
    MetricsRegistry &metrics;
    const CollectorOptions &options;
    std::int64_t &syncCounter;
    int epollFd = -1; // -1: no epoll (the channel is driven by hand)
};

// One guest: connect to its socket, read within its allowance, hand the
// bytes to an Ingestor, flush what the Ingestor owes, and retry a store
// that failed. No loop of its own: the Collector drives it, one wake at a
// time, in two phases around the wake's one transaction: handle() turns
// lines into uncommitted reports, complete() acks them once committed.
class Channel
{
  public:
    Channel(ChannelConfig config, ChannelEnv env);
    // The ingestor's hooks and epoll point back here: a channel never moves.
    Channel(const Channel &) = delete;
    Channel &operator=(const Channel &) = delete;

    void tryConnect(std::int64_t now);
    void disconnect(const std::string &reason, bool penalty, std::int64_t now);
    // An epoll event for this channel's socket (edge-triggered).
    void onEvent(std::uint32_t events, std::int64_t now);
    // Reads at most `room` bytes (the collector's memory budget for this
    // guest) and queues the lines; handling waits for handle().
    void onReadable(std::int64_t now, std::size_t room);
    // Phase one of the channel's turn: handles at most
    // options.maxMessagesPerWake queued messages. True if reports wait for
    // the commit (reports()).
    bool handle(std::int64_t now);
    // This channel's part of the wake's batch: its reports, named by its VM.
    ChannelReports reports();
    // Phase two: the commit of reports() (null: there were none), then
    // acks from their receipts, violations, the held store's resync, flush.
    void complete(std::int64_t now, const Result<void> *committed);
    void flush(std::int64_t now);

    // Input is waiting in the socket (edge-triggered: until a short read).
    bool readable() const { return readable_; }
    // Anything to do this wake without a new event: input it may read now,
    // queued lines, or a timer due.
    bool due(std::int64_t now) const;
    bool connected() const { return fd_.isValid(); }
    int fd() const { return fd_.get(); }
    // Poll for input: connected, not throttled, nothing queued to handle.
    bool wantsInput(std::int64_t now) const;
    // Work left that needs no input (queued lines): the loop must not sleep.
    bool busy() const;
    // The next time this channel needs a wake without any fd event.
    std::int64_t nextDeadline(std::int64_t now) const;
    std::size_t bufferedBytes() const;

    const ChannelConfig &config() const { return config_; }
    ChannelConfig &config() { return config_; }
    const Ingestor *ingestor() const { return ingestor_.get(); }
    bool storeHeld() const { return ingestor_ && ingestor_->held(); }

    std::int64_t nextAttemptMs = 0;
    std::int64_t throttledUntilMs = 0;
    std::int64_t nextFactsMs = 0;
    int peerPid = 0;

  private:
    void account();
    void checkHeld(std::int64_t now);

    ChannelConfig config_;
    ChannelEnv env_;
    UniqueFD fd_;
    std::unique_ptr<Ingestor> ingestor_;
    std::string out_; // bytes owed to the agent (acks, commands)
    bool readable_ = false, hup_ = false, handled_ = false;
    int backoffMs_ = 0;
    TokenBucket bytes_, messages_;
    IngestStats seen_; // ingestor stats already added to the metrics
    // A held store (see Ingestor::held): when to resync, and the next wait.
    std::int64_t retryAtMs_ = 0;
    int retryMs_ = 0;
    std::uint64_t heldStoredMark_ = 0; // stores done (this connection) when it was held
    std::uint64_t heldErrorsMark_ = 0; // store errors (this connection) when it was held
};

std::int64_t nowMs();
std::int64_t wallSeconds();

} // namespace daxprobe::collector
