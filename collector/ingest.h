#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collector/report_batch.h"
#include "protocol/line_decoder.h"
#include "protocol/message.h"
#include "protocol/schema.h"

namespace daxprobe::collector
{

struct IngestLimits {
    protocol::Limits message = protocol::kReportLimits;
    // Malformed messages tolerated per connection. One is expected: the tail
    // of a line cut by an earlier disconnect, before the agent's sentinel.
    unsigned maxInvalid = 16;
};

// Reports are not stored through a hook: the collector commits every guest's
// uncommitted() in one transaction and calls afterCommit() on each (collector.cpp).
struct IngestHooks {
    std::function<void(const protocol::AgentIdentity &)> identity;
};

struct IngestStats {
    std::uint64_t messages = 0, reports = 0, stored = 0, duplicates = 0, invalid = 0,
                  storeErrors = 0, errorsFromAgent = 0,
                  deferred = 0, // reports passed over (not stored, not acked) while held
        ackReplies = 0;         // the agent's answers to our acks (not rate-limited)
};

// The host's side of one connection with no I/O: untrusted bytes in, acks
// and commands out. The collector's channel feeds it; the fuzzer does too.
class Ingestor
{
  public:
    Ingestor(IngestLimits limits, IngestHooks hooks);

    // What to send right after connecting: a sentinel so the agent drops any
    // half line, sync (which makes it resend unacknowledged reports), info.
    void start(std::int64_t syncId);

    // Splits bytes into lines and queues them; nothing is handled yet. A line
    // over the size limit is a violation at once (it is never buffered).
    void receive(std::string_view data);
    // Handles at most maxMessages queued lines: the channel bounds the work
    // of one wake with it, so one guest cannot stall the others. Reports
    // are validated and wait in uncommitted() for a commit; nothing is acked yet.
    std::size_t process(std::size_t maxMessages);
    // Reports handled but not committed yet, oldest first, each with the
    // receipt the commit fills (collector/report_batch.h).
    std::span<BatchEntry> uncommitted() { return uncommitted_; }
    std::span<const BatchEntry> uncommitted() const { return uncommitted_; }
    // After the commit of uncommitted(): one ack per stream (cumulative, the
    // highest seq) from the receipts. If the commit failed, or left a
    // receipt NotStored, nothing is acked: the connection is held (below) and
    // the reports count as one store error and deferred.
    void afterCommit(const Result<void> &committed);
    // Lines received but not handled yet.
    std::size_t backlog() const { return lines_.size(); }
    // Bytes the peer makes us hold: its partial line and the queued lines.
    std::size_t bufferedBytes() const { return decoder_.buffered() + backlogBytes_; }

    // After a failed store nothing more is acknowledged (acks are cumulative:
    // a later ack would make the agent forget the failed report) and further
    // reports are passed over, until resync(): a new sync, whose return makes
    // the agent resend every unacknowledged report, oldest first. From that
    // return on, reports are stored and acked again, in order.
    bool held() const { return held_; }
    void resync(std::int64_t syncId);

    std::string takeOutput() { return std::exchange(out_, {}); }
    std::string_view output() const { return out_; }
    // Set once the peer broke the rules; the channel then hangs up.
    const std::optional<std::string> &violation() const { return violation_; }
    const std::optional<protocol::AgentIdentity> &identity() const { return identity_; }
    const IngestStats &stats() const { return stats_; }
    bool synced() const { return synced_; }

  private:
    void handleLine(const std::string &line);
    void handleReport(protocol::ReportRecord r);
    void handleEvent(const protocol::Message &m);
    void handleReturn(const protocol::Message &m);
    void invalid(std::string_view why);
    void send(const nlohmann::json &m) { out_ += protocol::encode(m); }

    IngestLimits limits_;
    IngestHooks hooks_;
    protocol::LineDecoder decoder_;
    std::string out_;
    std::optional<std::string> violation_;
    std::optional<protocol::AgentIdentity> identity_;
    IngestStats stats_;
    std::deque<std::string> lines_;
    std::vector<BatchEntry> uncommitted_;
    std::uint64_t acksUnanswered_ = 0; // answers to these are free of the rate limit
    std::size_t backlogBytes_ = 0;
    std::int64_t syncId_ = -1;
    bool synced_ = false;
    bool held_ = false;
};

} // namespace daxprobe::collector
