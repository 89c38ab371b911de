#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "line_decoder.h"
#include "message.h"
#include "schema.h"

namespace daxprobe::collector
{

struct IngestLimits {
    protocol::Limits message = protocol::kReportLimits;
    // Malformed messages tolerated per connection. One is expected: the tail
    // of a line cut by an earlier disconnect, before the agent's sentinel.
    unsigned maxInvalid = 16;
};

struct IngestHooks {
    // Commit a report; true if new, false if already stored. Only after this
    // returns successfully is the report acknowledged.
    std::function<Result<bool>(const protocol::ReportEnvelope &)> storeReport;
    std::function<void(const protocol::AgentIdentity &)> identity;
};

struct IngestStats {
    std::uint64_t messages = 0, reports = 0, stored = 0, duplicates = 0, invalid = 0,
                  storeErrors = 0, errorsFromAgent = 0;
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
    void feed(std::string_view data);

    std::string takeOutput() { return std::exchange(out_, {}); }
    std::string_view output() const { return out_; }
    // Set once the peer broke the rules; the channel then hangs up.
    const std::optional<std::string> &violation() const { return violation_; }
    const std::optional<protocol::AgentIdentity> &identity() const { return identity_; }
    const IngestStats &stats() const { return stats_; }
    std::uint64_t lastDropped() const { return lastDropped_; }
    bool synced() const { return synced_; }

  private:
    void handleLine(const std::string &line);
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
    std::int64_t syncId_ = -1;
    bool synced_ = false;
    std::uint64_t lastDropped_ = 0;
};

} // namespace daxprobe::collector
