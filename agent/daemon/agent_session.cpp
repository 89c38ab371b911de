#include "agent/daemon/agent_session.h"

#include <exception>

#include "agent/daemon/command_scan.h"
#include "protocol/report_summary.h"
#include "protocol/verdicts.h"

namespace daxprobe
{

using nlohmann::json;
using protocol::Message;
namespace ec = protocol::error_class;

namespace
{

CommandReply ok(json v)
{
    return {std::move(v), {}, {}};
}
CommandReply err(std::string_view cls, std::string desc)
{
    return {nullptr, cls, std::move(desc)};
}

json idFromText(std::string_view idText)
{
    return idText.empty() ? json() : json::parse(idText, nullptr, false);
}

} // namespace

AgentSession::AgentSession(protocol::AgentIdentity identity, AgentHooks hooks,
                           SessionOptions options)
    : identity_(std::move(identity)), hooks_(std::move(hooks)), options_(options),
      decoder_(options.commandLimits.maxMessageBytes), queue_(options.maxPending)
{
}

std::string AgentSession::fingerprint(const json &report)
{
    auto s = protocol::summarizeReport(report.dump(-1, ' ', false, json::error_handler_t::replace));
    std::string fp = s.code;
    // New bad sectors or damaged files are a change too (issue 35).
    for (const auto &n : s.namespaces)
        fp += fmt::format("|{}={}:{}", n.dev, n.code, n.badblocks.value_or(0));
    for (const auto &m : s.mounts)
        fp += fmt::format("|{}={}:{}", m.key, m.code, m.damagedFiles.value_or(0));
    // A namespace or dax device reconfigured to another mode is a change
    // even where its verdict stays (fsdax and devdax are both DAX-capable).
    for (const auto &n : report.value("namespaces", json::array()))
        if (n.is_object())
            fp += fmt::format("|{}:{}", n.value("dev", ""), n.value("mode", ""));
    for (const auto &d : report.value("dax_devices", json::array()))
        if (d.is_object())
            fp += fmt::format("|{}:{}", d.value("chardev", ""), d.value("mode", ""));
    return fp;
}

bool AgentSession::send(std::string line, bool sentinelFirst)
{
    if (!connected_)
        return false;
    if (out_.size() + line.size() > options_.maxOutputBytes) {
        ++outputDropped_;
        return false;
    }
    if (sentinelFirst)
        out_.push_back(protocol::kSentinel);
    out_ += line;
    return true;
}

void AgentSession::onConnect()
{
    connected_ = true;
    decoder_.reset();
    out_.clear();
    send(protocol::encode(protocol::makeGreeting(identity_, options_.reportLimits)), true);
    resendPending();
}

void AgentSession::onDisconnect()
{
    connected_ = false;
    decoder_.reset();
    out_.clear();
}

void AgentSession::resendPending()
{
    for (const auto &e : queue_.entries())
        if (!send(e.line))
            break;
}

void AgentSession::pushReport(json report, std::string_view reason)
{
    lastFingerprint_ = fingerprint(report);
    lastReason_ = std::string(reason);
    lastVerdict_ = lastFingerprint_.substr(0, lastFingerprint_.find('|'));
    protocol::ReportEnvelope env;
    env.stream = identity_.stream;
    env.seq = ++seq_;
    env.reason = std::string(reason);
    // Counted as of this report: pushing it may drop one more.
    env.droppedReports = queue_.dropped() + (queue_.size() >= queue_.capacity() ? 1 : 0);
    env.report = std::move(report);
    env.metrics = hooks_.metrics ? hooks_.metrics() : json();
    std::string line = protocol::encode(protocol::makeReportEvent(env));
    if (line.size() > options_.reportLimits.maxMessageBytes) {
        // The host would refuse it; send the verdict alone so it still learns it.
        env.report = {{"schema", protocol::kCheckSchema},
                      {"verdict",
                       {{"code", env.report.value("verdict", json::object())
                                     .value("code", protocol::code::CheckFailed)},
                        {"summary", "full report exceeded the protocol size limit"}}},
                      {"truncated", true}};
        env.metrics = nullptr;
        line = protocol::encode(protocol::makeReportEvent(env));
    }
    queue_.push(env.seq, line);
    send(std::move(line));
}

void AgentSession::produceReport(std::string_view reason)
{
    json report;
    try {
        report = hooks_.check ? hooks_.check() : json::object();
    } catch (const std::exception &e) {
        report = protocol::failedCheckReport(e.what());
    }
    // A periodic check that finds a verdict changed reports that change: a
    // mount change that lands while the interval's check runs is seen by that
    // check, and its own re-check then finds nothing new to report.
    if (reason == "interval" && !lastFingerprint_.empty() &&
        fingerprint(report) != lastFingerprint_)
        reason = "change";
    pushReport(std::move(report), reason);
}

bool AgentSession::recheck()
{
    json report;
    try {
        report = hooks_.check ? hooks_.check() : json::object();
    } catch (const std::exception &) {
        return false; // the next interval report will carry the failure
    }
    if (fingerprint(report) == lastFingerprint_)
        return false;
    pushReport(std::move(report), "change");
    return true;
}

void AgentSession::onBytes(std::string_view data)
{
    // One vector for the session's life: no allocation per read.
    frames_.clear();
    decoder_.feed(data, frames_);
    for (auto &f : frames_) {
        switch (f.kind) {
        case protocol::LineDecoder::Frame::Kind::Line:
            handleLine(f.text);
            break;
        case protocol::LineDecoder::Frame::Kind::Oversize:
            ++badMessages_;
            send(protocol::encode(protocol::makeError(
                ec::kMessageTooLarge, fmt::format("line longer than {} bytes", decoder_.maxLine()),
                nullptr)));
            break;
        case protocol::LineDecoder::Frame::Kind::Resync:
            break; // the host flushed its side; nothing to answer
        }
    }
}

void AgentSession::handleLine(const std::string &line)
{
    // The plain shape of ping/info/check/...: no JSON document built for it.
    if (auto simple = scanSimpleCommand(line)) {
        static const json kNoArguments = json::object();
        answerCommand(simple->name, kNoArguments, simple->id);
        return;
    }
    auto obj = protocol::parseObject(line, options_.commandLimits);
    if (!obj) {
        ++badMessages_;
        send(protocol::encode(protocol::makeError(protocol::errorClassFor(obj.error()),
                                                  obj.error().message, nullptr)));
        return;
    }
    json id = obj->contains("id") ? (*obj)["id"] : json();
    if (!id.is_primitive())
        id = nullptr;
    auto m = protocol::classify(*obj);
    if (!m) {
        ++badMessages_;
        send(protocol::encode(
            protocol::makeError(protocol::errorClassFor(m.error()), m.error().message, id)));
        return;
    }
    if (m->kind != Message::Kind::Command) {
        // Hosts only send commands; answering a stray return would start a ping-pong.
        if (m->kind == Message::Kind::Event)
            send(protocol::encode(
                protocol::makeError(ec::kInvalidMessage, "the agent accepts commands only", id)));
        return;
    }
    std::string idText = m->id.is_null()
                             ? std::string()
                             : m->id.dump(-1, ' ', false, json::error_handler_t::replace);
    answerCommand(m->name, m->payload, idText);
}

void AgentSession::answerCommand(std::string_view name, const json &arguments,
                                 std::string_view idText)
{
    bool sentinelFirst = false;
    // Two statements: the flag is set by dispatch, so it must run first.
    std::string line = dispatch(name, arguments, idText, sentinelFirst);
    send(std::move(line), sentinelFirst);
    if (name == "sync")
        resendPending(); // after the return, so a syncing host sees it first
}

std::string AgentSession::encodeReturn(const json &value, std::string_view idText)
{
    // Byte for byte protocol::encode(protocol::makeReturn(value, id)): a
    // dump sorts the keys, so "id" comes before "return".
    std::string out = "{";
    if (!idText.empty()) {
        out += "\"id\":";
        out += idText;
        out += ',';
    }
    out += "\"return\":";
    out += value.dump(-1, ' ', false, json::error_handler_t::replace);
    out += "}\n";
    return out;
}

json AgentSession::cmdInfo()
{
    json commands = json::array();
    for (const auto &c : protocol::commandSpecs())
        commands.push_back({{"name", c.name}, {"help", c.help}});
    return {{"protocol", protocol::kProtocolVersion},
            {"agent",
             {{"name", "daxprobe"},
              {"version", identity_.version},
              {"machine_id", identity_.machineId},
              {"hostname", identity_.hostname},
              {"stream", identity_.stream}}},
            {"commands", commands},
            {"reports",
             {{"last_seq", seq_},
              {"pending", queue_.size()},
              {"pending_limit", queue_.capacity()},
              {"dropped", queue_.dropped()},
              {"output_dropped", outputDropped_}}},
            {"bad_messages", badMessages_},
            {"commands_handled", commandsHandled_}};
}

// One case per protocol::Command and no default: a command added to the
// protocol without a handler here does not build.
#pragma GCC diagnostic error "-Wswitch"
CommandReply AgentSession::execute(protocol::Command command, const json &a)
{
    using protocol::Command;
    switch (command) {
    case Command::Ping:
        return ok(json::object());
    case Command::Info:
        return ok(cmdInfo());
    case Command::Sync: {
        auto it = a.find("id");
        if (it == a.end() || !it->is_number_integer())
            return err(ec::kInvalidParameter, "sync needs an integer \"id\"");
        return ok(*it);
    }
    case Command::Check:
        return hooks_.check ? ok(hooks_.check()) : err(ec::kCommandFailed, "no check");
    case Command::Metrics:
        return hooks_.metrics ? ok(hooks_.metrics()) : ok(json::object());
    case Command::Ack: {
        auto ack = protocol::parseAckArguments(a);
        if (!ack)
            return err(ec::kInvalidParameter, ack.error().message);
        // An ack for an older stream (before a restart) has nothing to drop.
        std::size_t n = ack->stream == identity_.stream ? queue_.ack(ack->seq) : 0;
        return ok({{"acked", n}, {"pending", queue_.size()}});
    }
    case Command::Report:
        produceReport("request");
        return ok({{"seq", seq_}});
    }
    return err(ec::kCommandNotFound, "unhandled command");
}

std::string AgentSession::dispatch(std::string_view name, const json &arguments,
                                   std::string_view idText, bool &sentinelFirst)
{
    // The whole command set, read-only by construction (docs/conventions.md:
    // an explicit table, ndctl's commands[]); the names live in protocol/.
    auto command = protocol::commandNamed(name);
    if (command) {
        ++commandsHandled_;
        CommandReply r;
        try {
            r = execute(*command, arguments);
        } catch (const std::exception &ex) {
            r = err(ec::kCommandFailed, ex.what());
        }
        if (!r.errorClass.empty())
            return protocol::encode(protocol::makeError(r.errorClass, r.desc, idFromText(idText)));
        sentinelFirst = *command == protocol::Command::Sync;
        return encodeReturn(r.value, idText);
    }
    ++badMessages_;
    return protocol::encode(protocol::makeError(
        ec::kCommandNotFound,
        fmt::format("unknown command '{}'", protocol::sanitizeIdentifier(name, 64)),
        idFromText(idText)));
}

} // namespace daxprobe
