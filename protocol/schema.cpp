#include "schema.h"

#include <array>
#include <cerrno>

namespace daxprobe::protocol
{

std::span<const CommandSpec> commandSpecs()
{
    static constexpr std::array<CommandSpec, 7> kCommands{{
        {"ping", "liveness: returns {}"},
        {"info", "agent identity, protocol version, commands, queue state"},
        {"sync",
         "guest-sync-delimited: replies 0xFF then {\"return\": id}; resends pending reports"},
        {"check", "runs the full check now; returns the daxprobe.check/1 report"},
        {"metrics", "page-cache and fault counters now"},
        {"ack", "host stored reports of `stream` up to `seq`; the agent forgets them"},
        {"report", "pushes a fresh report event now (same as the interval timer)"},
    }};
    return kCommands;
}

std::string sanitizeIdentifier(std::string_view s, std::size_t maxLen)
{
    std::string out;
    for (char c : s) {
        if (out.size() >= maxLen)
            break;
        out.push_back(c >= 0x21 && c <= 0x7e ? c : '_');
    }
    return out;
}

json makeGreeting(const AgentIdentity &agent, const Limits &limits)
{
    json commands = json::array();
    for (const auto &c : commandSpecs())
        commands.push_back(c.name);
    return makeEvent(kEventGreeting, {{"protocol", kProtocolVersion},
                                      {"agent",
                                       {{"name", "daxprobe"},
                                        {"version", agent.version},
                                        {"machine_id", agent.machineId},
                                        {"hostname", agent.hostname},
                                        {"stream", agent.stream}}},
                                      {"capabilities",
                                       {{"commands", commands},
                                        {"events", {kEventGreeting, kEventReport}},
                                        {"sentinel", true},
                                        {"max_message_bytes", limits.maxMessageBytes},
                                        {"max_depth", limits.maxDepth}}}});
}

namespace
{

std::string stringField(const json &o, const char *key, std::size_t maxLen)
{
    auto it = o.find(key);
    if (it == o.end() || !it->is_string())
        return {};
    return sanitizeIdentifier(it->get_ref<const std::string &>(), maxLen);
}

Result<std::uint64_t> seqField(const json &o)
{
    auto it = o.find("seq");
    if (it == o.end() || !it->is_number_unsigned())
        return fail("\"seq\" must be a positive integer", EPROTO);
    auto v = it->get<std::uint64_t>();
    if (v == 0 || v > kMaxSeq)
        return fail("\"seq\" out of range", EPROTO);
    return v;
}

Result<std::string> streamField(const json &o)
{
    auto it = o.find("stream");
    if (it == o.end() || !it->is_string())
        return fail("\"stream\" must be a string", EPROTO);
    const auto &s = it->get_ref<const std::string &>();
    if (s.empty() || s.size() > 64 || s.find_first_not_of("0123456789abcdef-") != std::string::npos)
        return fail("\"stream\" must be 1-64 characters of [0-9a-f-]", EPROTO);
    return s;
}

} // namespace

Result<Greeting> parseGreeting(const Message &m)
{
    if (m.kind != Message::Kind::Event || m.name != kEventGreeting)
        return fail("not a greeting", EPROTO);
    const json &d = m.payload;
    Greeting g;
    auto p = d.find("protocol");
    if (p == d.end() || !p->is_number_integer())
        return fail("greeting without an integer \"protocol\"", EPROTO);
    g.protocol = p->get<int>();
    auto a = d.find("agent");
    if (a == d.end() || !a->is_object())
        return fail("greeting without an \"agent\" object", EPROTO);
    g.agent.machineId = stringField(*a, "machine_id", 64);
    g.agent.hostname = stringField(*a, "hostname", 255);
    g.agent.version = stringField(*a, "version", 64);
    auto stream = streamField(*a);
    if (!stream)
        return tl::unexpected(stream.error());
    g.agent.stream = *stream;
    g.capabilities = d.value("capabilities", json::object());
    return g;
}

json makeReportEvent(const ReportEnvelope &r)
{
    return makeEvent(kEventReport, {{"stream", r.stream},
                                    {"seq", r.seq},
                                    {"reason", r.reason},
                                    {"dropped_reports", r.droppedReports},
                                    {"report", r.report},
                                    {"metrics", r.metrics}});
}

Result<ReportEnvelope> parseReportEvent(const Message &m)
{
    if (m.kind != Message::Kind::Event || m.name != kEventReport)
        return fail("not a report event", EPROTO);
    const json &d = m.payload;
    ReportEnvelope r;
    auto stream = streamField(d);
    if (!stream)
        return tl::unexpected(stream.error());
    r.stream = *stream;
    auto seq = seqField(d);
    if (!seq)
        return tl::unexpected(seq.error());
    r.seq = *seq;
    r.reason = stringField(d, "reason", 32);
    auto rep = d.find("report");
    if (rep == d.end() || !rep->is_object())
        return fail("report event without a \"report\" object", EPROTO);
    r.report = *rep;
    r.metrics = d.value("metrics", json());
    if (auto it = d.find("dropped_reports"); it != d.end() && it->is_number_unsigned())
        r.droppedReports = it->get<std::uint64_t>();
    return r;
}

json makeAckArguments(const Ack &ack)
{
    return {{"stream", ack.stream}, {"seq", ack.seq}};
}

Result<Ack> parseAckArguments(const json &arguments)
{
    Ack a;
    auto stream = streamField(arguments);
    if (!stream)
        return tl::unexpected(stream.error());
    a.stream = *stream;
    auto seq = seqField(arguments);
    if (!seq)
        return tl::unexpected(seq.error());
    a.seq = *seq;
    return a;
}

} // namespace daxprobe::protocol
