#pragma once

#include <cstdint>
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

// What every channel shares: the store, the metrics, the options, and the
// sync id counter (ids are unique per collector, so a stale return never
// matches).
struct ChannelEnv {
    Store &store;
    MetricsRegistry &metrics;
    const CollectorOptions &options;
    std::int64_t &syncCounter;
};

// One guest: connect to its socket, read within its allowance, hand the
// bytes to an Ingestor, flush what the Ingestor owes, and retry a store
// that failed. No poll loop of its own: the Collector calls it.
class Channel
{
  public:
    Channel(ChannelConfig config, ChannelEnv env);
    // The ingestor's hooks point back here: a channel never moves.
    Channel(const Channel &) = delete;
    Channel &operator=(const Channel &) = delete;

    void tryConnect(std::int64_t now);
    void disconnect(const std::string &reason, bool penalty, std::int64_t now);
    // Reads at most `room` bytes (the collector's memory budget for this
    // guest) and queues the lines; handling waits for step().
    void onReadable(std::int64_t now, std::size_t room);
    // The channel's turn, once per wake: handles at most
    // options.maxMessagesPerWake queued messages, resyncs a held store when
    // its retry is due, flushes.
    void step(std::int64_t now);
    void flush(std::int64_t now);

    bool connected() const { return fd_.isValid(); }
    int fd() const { return fd_.get(); }
    // Poll for input: connected, not throttled, nothing queued to handle.
    bool wantsInput(std::int64_t now) const;
    bool wantsOutput() const { return fd_ && !out_.empty(); }
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
    void handle(std::int64_t now);
    void account();
    void checkHeld(std::int64_t now);

    ChannelConfig config_;
    ChannelEnv env_;
    UniqueFD fd_;
    std::unique_ptr<Ingestor> ingestor_;
    std::string out_; // bytes owed to the agent (acks, commands)
    int backoffMs_ = 0;
    TokenBucket bytes_, messages_;
    IngestStats seen_; // ingestor stats already added to the metrics
    // A held store (see Ingestor::held): when to resync, and the next wait.
    std::int64_t retryAtMs_ = 0;
    int retryMs_ = 0;
    std::uint64_t heldStoredMark_ = 0; // stores done (this connection) when it was held
};

std::int64_t nowMs();
std::int64_t wallSeconds();

} // namespace daxprobe::collector
