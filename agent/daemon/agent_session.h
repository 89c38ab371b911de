#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "agent/daemon/report_queue.h"
#include "protocol/line_decoder.h"
#include "protocol/message.h"
#include "protocol/schema.h"

namespace daxprobe
{

// What the daemon asks of the rest of the agent. Injected so the session and
// the loop build and test without the probes.
struct AgentHooks {
    std::function<nlohmann::json()> check;   // daxprobe.check/1 report
    std::function<nlohmann::json()> metrics; // counters now
};

// A command's outcome: a value, or an error class and description.
struct CommandReply {
    nlohmann::json value;
    std::string_view errorClass;
    std::string desc;
};

struct SessionOptions {
    std::size_t maxPending = 64;          // unacknowledged reports kept
    std::size_t maxOutputBytes = 8 << 20; // bytes queued for a slow host
    protocol::Limits commandLimits = protocol::kCommandLimits;
    protocol::Limits reportLimits = protocol::kReportLimits;
};

// The agent's side of the protocol with no I/O: bytes in, bytes out. The
// daemon loop owns the fd and feeds this; tests drive it directly.
class AgentSession
{
  public:
    AgentSession(protocol::AgentIdentity identity, AgentHooks hooks, SessionOptions options = {});

    // The host arrived: sentinel (so it drops any half line of ours), greeting,
    // then every unacknowledged report.
    void onConnect();
    // The host went away: whatever it had not read is lost, the queue is not.
    void onDisconnect();
    void onBytes(std::string_view data);

    // Runs a check and pushes a report (reason: start, interval, change).
    void produceReport(std::string_view reason);
    // Runs a check; pushes a report only if a verdict differs from the last
    // report's. Returns whether it did.
    bool recheck();

    std::string_view output() const { return out_; }
    void consumed(std::size_t n) { out_.erase(0, n); }
    bool connected() const { return connected_; }

    const protocol::AgentIdentity &identity() const { return identity_; }
    const ReportQueue &queue() const { return queue_; }
    std::uint64_t lastSeq() const { return seq_; }
    std::uint64_t outputDropped() const { return outputDropped_; }
    // Of the last report pushed: why, and its top-level verdict code.
    const std::string &lastReason() const { return lastReason_; }
    const std::string &lastVerdict() const { return lastVerdict_; }

    // One fingerprint of every verdict code in a report: a change in it is
    // what "the verdict changed" means.
    static std::string fingerprint(const nlohmann::json &report);
    // The return line for `value` to a command with this id (JSON text,
    // empty: none): what encode(makeReturn(value, id)) gives, without the
    // document around it.
    static std::string encodeReturn(const nlohmann::json &value, std::string_view idText);

  private:
    void handleLine(const std::string &line);
    // Runs one command and queues its reply. idText: the id as JSON text
    // (empty: none), so a reply is printed without building a document.
    void answerCommand(std::string_view name, const nlohmann::json &arguments,
                       std::string_view idText);
    std::string dispatch(std::string_view name, const nlohmann::json &arguments,
                         std::string_view idText, bool &sentinelFirst);
    void pushReport(nlohmann::json report, std::string_view reason);
    void resendPending();
    // Queues one line; a host that stopped reading gets nothing more (the
    // reports stay queued and are resent on the next sync or connect).
    bool send(std::string line, bool sentinelFirst = false);

    CommandReply execute(protocol::Command command, const nlohmann::json &arguments);
    nlohmann::json cmdInfo();

    protocol::AgentIdentity identity_;
    AgentHooks hooks_;
    SessionOptions options_;
    protocol::LineDecoder decoder_;
    std::vector<protocol::LineDecoder::Frame> frames_;
    ReportQueue queue_;
    std::string out_;
    std::uint64_t seq_ = 0;
    std::uint64_t outputDropped_ = 0;
    std::string lastFingerprint_;
    std::string lastReason_, lastVerdict_;
    bool connected_ = false;
    std::uint64_t commandsHandled_ = 0;
    std::uint64_t badMessages_ = 0;
};

} // namespace daxprobe
