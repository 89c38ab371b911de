#include "protocol/schema.h"

#include <array>
#include <cerrno>

#include "protocol/json_text.h"

namespace daxprobe::protocol
{

std::span<const CommandSpec> commandSpecs()
{
    static constexpr std::array<CommandSpec, 7> kCommands{{
        {Command::Ping, "ping", "liveness: returns {}"},
        {Command::Info, "info", "agent identity, protocol version, commands, queue state"},
        {Command::Sync, "sync",
         "guest-sync-delimited: replies 0xFF then {\"return\": id}; resends pending reports"},
        {Command::Check, "check", "runs the full check now; returns the daxprobe.check/1 report"},
        {Command::Metrics, "metrics", "page-cache and fault counters now"},
        {Command::Ack, "ack",
         "host stored reports of `stream` up to `seq`; the agent forgets them"},
        {Command::Report, "report", "pushes a fresh report event now (same as the interval timer)"},
    }};
    return kCommands;
}

std::optional<Command> commandNamed(std::string_view name)
{
    for (const auto &c : commandSpecs())
        if (c.name == name)
            return c.id;
    return std::nullopt;
}

std::string_view commandName(Command id)
{
    for (const auto &c : commandSpecs())
        if (c.id == id)
            return c.name;
    return {};
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

// The rules on stream and seq, whichever form (DOM or text) they come in.
Result<std::uint64_t> checkSeq(std::optional<std::uint64_t> v)
{
    if (!v)
        return fail("\"seq\" must be a positive integer", EPROTO);
    if (*v == 0 || *v > kMaxSeq)
        return fail("\"seq\" out of range", EPROTO);
    return *v;
}

Result<std::string> checkStream(std::optional<std::string> s)
{
    if (!s)
        return fail("\"stream\" must be a string", EPROTO);
    if (s->empty() || s->size() > 64 ||
        s->find_first_not_of("0123456789abcdef-") != std::string::npos)
        return fail("\"stream\" must be 1-64 characters of [0-9a-f-]", EPROTO);
    return std::move(*s);
}

Result<std::uint64_t> seqField(const json &o)
{
    auto it = o.find("seq");
    if (it == o.end() || !it->is_number_unsigned())
        return checkSeq(std::nullopt);
    return checkSeq(it->get<std::uint64_t>());
}

Result<std::string> streamField(const json &o)
{
    auto it = o.find("stream");
    if (it == o.end() || !it->is_string())
        return checkStream(std::nullopt);
    return checkStream(it->get<std::string>());
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
    auto rec = parseReportData(m.payload.dump(-1, ' ', false, json::error_handler_t::replace));
    if (!rec)
        return tl::unexpected(rec.error());
    ReportEnvelope r;
    r.stream = std::move(rec->stream);
    r.seq = rec->seq;
    r.reason = std::move(rec->reason);
    r.droppedReports = rec->droppedReports;
    r.report = json::parse(rec->reportText, nullptr, false);
    if (!rec->metricsText.empty())
        r.metrics = json::parse(rec->metricsText, nullptr, false);
    return r;
}

Result<ReportRecord> parseReportData(std::string_view dataText, const JsonSpans *spans)
{
    std::optional<std::string_view> stream, seq, reason, report, metrics, dropped;
    std::string key;
    std::string_view v;
    for (JsonObjectReader r(dataText, spans); r.next(key, v);) {
        if (key == "stream")
            stream = v;
        else if (key == "seq")
            seq = v;
        else if (key == "reason")
            reason = v;
        else if (key == "report")
            report = v;
        else if (key == "metrics")
            metrics = v;
        else if (key == "dropped_reports")
            dropped = v;
    }
    ReportRecord rec;
    auto s = checkStream(stream ? jsonString(*stream) : std::nullopt);
    if (!s)
        return tl::unexpected(s.error());
    rec.stream = std::move(*s);
    auto n = checkSeq(seq ? jsonUnsigned(*seq) : std::nullopt);
    if (!n)
        return tl::unexpected(n.error());
    rec.seq = *n;
    if (auto text = reason ? jsonString(*reason) : std::nullopt)
        rec.reason = sanitizeIdentifier(*text, 32);
    if (!report || !jsonIsObject(*report))
        return fail("report event without a \"report\" object", EPROTO);
    rec.reportText = *report;
    if (metrics && !jsonIsNull(*metrics))
        rec.metricsText = *metrics;
    rec.droppedReports = (dropped ? jsonUnsigned(*dropped) : std::nullopt).value_or(0);
    rec.summary = summarizeReport(*report, spans); // the view: the spans are of its bytes
    return rec;
}

Result<DecodedLine> decodeLine(std::string_view line, const Limits &limits)
{
    if (line.size() > limits.maxMessageBytes)
        return failf(EMSGSIZE, "message of {} bytes exceeds the limit of {}", line.size(),
                     limits.maxMessageBytes);
    JsonSpans spans;
    auto value = validateJson(line, limits.maxDepth, &spans);
    if (!value)
        return tl::unexpected(value.error());
    if (!jsonIsObject(*value))
        return fail("message is not a JSON object", EBADMSG);
    // What classify() would take as an event named "report" is read here;
    // anything else is left to it (and its errors).
    bool otherKind = false, scalarId = true;
    std::optional<std::string> event;
    std::optional<std::string_view> data;
    std::string key;
    std::string_view v;
    for (JsonObjectReader r(*value, &spans); r.next(key, v);) {
        if (key == "event")
            event = jsonString(v);
        else if (key == "data")
            data = v;
        else if (key == "id")
            scalarId = !v.starts_with('{') && !v.starts_with('[');
        else if (key == "execute" || key == "return" || key == "error")
            otherKind = true;
    }
    if (!otherKind && scalarId && event == kEventReport) {
        if (data && !jsonIsObject(*data))
            return fail("\"data\" must be an object", EPROTO);
        // Without "data" classify() reads an empty object, and so do we.
        auto rec = parseReportData(data ? *data : std::string_view("{}"), &spans);
        if (!rec)
            return tl::unexpected(rec.error());
        return DecodedLine(std::move(*rec));
    }
    // Valid JSON within the depth: this parse is the line's one decode.
    json o = json::parse(value->begin(), value->end(), nullptr, false);
    if (!o.is_object())
        return fail("message is not valid JSON", EBADMSG); // validateJson is tied to accept()
    auto m = classify(o);
    if (!m)
        return tl::unexpected(m.error());
    return DecodedLine(std::move(*m));
}

ReportRecord recordOf(const ReportEnvelope &r)
{
    auto dump = [](const json &j) {
        return j.dump(-1, ' ', false, json::error_handler_t::replace);
    };
    ReportRecord rec{r.stream,
                     r.seq,
                     r.reason,
                     r.droppedReports,
                     dump(r.report),
                     r.metrics.is_null() ? std::string() : dump(r.metrics),
                     {}};
    rec.summary = summarizeReport(rec.reportText);
    return rec;
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
