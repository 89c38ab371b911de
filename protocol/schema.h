#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "protocol/identifier.h"
#include "protocol/message.h"
#include "protocol/report_summary.h"

namespace daxprobe::protocol
{

// The agent's read-only command set (PROTOCOL.md, "Commands"): its one home.
// The agent dispatches on the id with a switch that names every value (the
// compiler warns about a missing one), the collector sends by name.
enum class Command { Ping, Info, Sync, Check, Metrics, Ack, Report };
struct CommandSpec {
    Command id;
    std::string_view name;
    std::string_view help;
};
std::span<const CommandSpec> commandSpecs();
std::optional<Command> commandNamed(std::string_view name);
std::string_view commandName(Command id);

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
// The DOM form, for the agent's side and tests; the rules are those of
// parseReportData (their one home), applied to the event's data.
Result<ReportEnvelope> parseReportEvent(const Message &m);

// A report event as the collector stores it: the envelope, and the agent's
// report and metrics as the JSON text it sent. That text was validated as
// part of its line (decodeLine), so it is stored as it is: never
// parsed into a DOM, never re-encoded.
struct ReportRecord {
    std::string stream;
    std::uint64_t seq = 0;
    std::string reason;
    std::uint64_t droppedReports = 0;
    std::string reportText;  // a JSON object
    std::string metricsText; // empty when absent or null
    ReportSummary summary;   // read with the line, from its spans
};

// The rules of a report event's data (JSON text of an object, validated):
// "stream" 1-64 characters of [0-9a-f-], "seq" an integer 1..2^53,
// "report" an object; "reason" (32) and "dropped_reports" optional;
// "metrics" any value. A repeated key counts with its last value, as in a DOM.
Result<ReportRecord> parseReportData(std::string_view dataText, const JsonSpans *spans = nullptr);

// One line from the agent, decoded once: validated in one pass, then a
// report event read from its text without a DOM (taken or refused here,
// never passed on), any other message through the DOM. The same limits,
// errors and rules as decode() + parseReportEvent().
using DecodedLine = std::variant<ReportRecord, Message>;
Result<DecodedLine> decodeLine(std::string_view line, const Limits &limits);

// The record of a report built here (tests, tools): texts dumped, summary read.
ReportRecord recordOf(const ReportEnvelope &r);

// ack: everything in `stream` up to and including `seq` is stored.
struct Ack {
    std::string stream;
    std::uint64_t seq = 0;
};
json makeAckArguments(const Ack &ack);
Result<Ack> parseAckArguments(const json &arguments);

// Largest seq a peer may send: JSON numbers are doubles to many readers.
inline constexpr std::uint64_t kMaxSeq = (1ULL << 53);

} // namespace daxprobe::protocol
