#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "message.h"

namespace daxprobe::protocol
{

// The agent's read-only command set (PROTOCOL.md, "Commands"). An explicit
// table, shared by the agent (dispatch) and the docs/tests (completeness).
struct CommandSpec {
    std::string_view name;
    std::string_view help;
};
std::span<const CommandSpec> commandSpecs();

inline constexpr std::string_view kEventGreeting = "greeting";
inline constexpr std::string_view kEventReport = "report";

// Who is talking: claimed by the guest, so the host stores it as an attribute
// and never uses it as a key (a guest could claim anything).
struct AgentIdentity {
    std::string machineId;
    std::string hostname;
    std::string stream;  // random per daemon start: (stream, seq) is unique
    std::string version; // daxprobe version
};

struct Greeting {
    int protocol = 0;
    AgentIdentity agent;
    json capabilities;
};

json makeGreeting(const AgentIdentity &agent, const Limits &limits);
Result<Greeting> parseGreeting(const Message &m);

// A pushed report: seq increases by one per report within a stream.
struct ReportEnvelope {
    std::string stream;
    std::uint64_t seq = 0;
    std::string reason;               // start | interval | change
    json report;                      // daxprobe.check/1 document
    json metrics;                     // collectMetrics() at the same time (object or null)
    std::uint64_t droppedReports = 0; // agent's count of reports it had to drop
};

json makeReportEvent(const ReportEnvelope &r);
Result<ReportEnvelope> parseReportEvent(const Message &m);

// ack: everything in `stream` up to and including `seq` is stored.
struct Ack {
    std::string stream;
    std::uint64_t seq = 0;
};
json makeAckArguments(const Ack &ack);
Result<Ack> parseAckArguments(const json &arguments);

// Largest seq a peer may send: JSON numbers are doubles to many readers.
inline constexpr std::uint64_t kMaxSeq = (1ULL << 53);

// Cleans a peer-supplied identifier for storage and display: bounded length,
// printable ASCII only.
std::string sanitizeIdentifier(std::string_view s, std::size_t maxLen);

} // namespace daxprobe::protocol
