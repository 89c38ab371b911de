#include "collector/ingest.h"

#include <algorithm>
#include <variant>

namespace daxprobe::collector
{

using nlohmann::json;
using protocol::Message;

Ingestor::Ingestor(IngestLimits limits, IngestHooks hooks)
    : limits_(limits), hooks_(std::move(hooks)), decoder_(limits.message.maxMessageBytes)
{
}

void Ingestor::start(std::int64_t syncId)
{
    syncId_ = syncId;
    out_.push_back(protocol::kSentinel);
    send(protocol::makeCommand(protocol::commandName(protocol::Command::Sync), {{"id", syncId}},
                               "sync"));
    send(protocol::makeCommand(protocol::commandName(protocol::Command::Info), nullptr, "info"));
}

void Ingestor::invalid(std::string_view why)
{
    ++stats_.invalid;
    if (stats_.invalid > limits_.maxInvalid && !violation_)
        violation_ =
            fmt::format("more than {} malformed messages (last: {})", limits_.maxInvalid, why);
}

void Ingestor::resync(std::int64_t syncId)
{
    syncId_ = syncId;
    send(protocol::makeCommand(protocol::commandName(protocol::Command::Sync), {{"id", syncId}},
                               "sync"));
}

void Ingestor::receive(std::string_view data)
{
    if (violation_)
        return; // nothing from a peer we are hanging up on is trusted
    for (auto &f : decoder_.feed(data)) {
        using Kind = protocol::LineDecoder::Frame::Kind;
        if (f.kind == Kind::Oversize) {
            // Our agent never sends this; anything that does is not our agent.
            violation_ = fmt::format("message longer than {} bytes", decoder_.maxLine());
            lines_.clear();
            backlogBytes_ = 0;
            return;
        }
        if (f.kind == Kind::Line) {
            backlogBytes_ += f.text.size();
            lines_.push_back(std::move(f.text));
        }
    }
}

std::size_t Ingestor::process(std::size_t maxMessages)
{
    std::size_t n = 0;
    while (n < maxMessages && !lines_.empty() && !violation_) {
        std::string line = std::move(lines_.front());
        lines_.pop_front();
        backlogBytes_ -= line.size();
        handleLine(line);
        ++n;
    }
    if (violation_) {
        lines_.clear();
        backlogBytes_ = 0;
    }
    return n;
}

void Ingestor::handleLine(const std::string &line)
{
    ++stats_.messages;
    // Reports, nearly every line, from the text without a DOM; the rest
    // (greetings, returns) through the DOM: one decode either way.
    auto decoded = protocol::decodeLine(line, limits_.message);
    if (!decoded) {
        invalid(decoded.error().message);
        return;
    }
    if (auto *report = std::get_if<protocol::ReportRecord>(&*decoded)) {
        handleReport(std::move(*report));
        return;
    }
    const Message &m = std::get<Message>(*decoded);
    switch (m.kind) {
    case Message::Kind::Event:
        handleEvent(m);
        break;
    case Message::Kind::Return:
        handleReturn(m);
        break;
    case Message::Kind::Error:
        ++stats_.errorsFromAgent;
        if (m.id == "ack" && acksUnanswered_ > 0) {
            --acksUnanswered_;
            ++stats_.ackReplies;
        }
        break;
    case Message::Kind::Command:
        // The host answers nothing: a guest must not drive the host.
        invalid("commands from the guest are not accepted");
        break;
    }
}

void Ingestor::handleEvent(const Message &m)
{
    if (m.name == protocol::kEventGreeting) {
        auto g = protocol::parseGreeting(m);
        if (!g) {
            invalid(g.error().message);
            return;
        }
        if (g->protocol != protocol::kProtocolVersion) {
            violation_ = fmt::format("unsupported protocol version {}", g->protocol);
            return;
        }
        identity_ = g->agent;
        if (hooks_.identity)
            hooks_.identity(*identity_);
        return;
    }
    // Reports never come here (decodeLine reads them): a newer agent's
    // event. Ignore it, do not punish.
}

void Ingestor::handleReport(protocol::ReportRecord r)
{
    ++stats_.reports;
    if (held_) {
        // Not even tried: the store just failed, and an ack for this one
        // would cover the failed one. The agent keeps it; resync() brings it back.
        ++stats_.deferred;
        return;
    }
    uncommitted_.push_back({std::move(r)});
}

void Ingestor::afterCommit(const Result<void> &committed)
{
    if (uncommitted_.empty())
        return;
    auto pending = [](const BatchEntry &p) { return p.receipt == Receipt::NotStored; };
    if (!committed || std::any_of(uncommitted_.begin(), uncommitted_.end(), pending)) {
        // None of them is stored: the first failed, the rest were not even
        // tried on their own. Nothing is acked until resync() brings them back.
        ++stats_.storeErrors;
        stats_.deferred += uncommitted_.size() - 1;
        held_ = true;
        uncommitted_.clear();
        return;
    }
    // Committed: acks are cumulative, so one per stream, for its highest
    // seq, tells the agent everything the per-report acks would.
    std::vector<std::pair<std::string_view, std::uint64_t>> top;
    for (const auto &p : uncommitted_) {
        ++(p.receipt == Receipt::Stored ? stats_.stored : stats_.duplicates);
        const auto &r = p.record;
        auto it =
            std::find_if(top.begin(), top.end(), [&](auto &t) { return t.first == r.stream; });
        if (it == top.end())
            top.emplace_back(r.stream, r.seq);
        else
            it->second = std::max(it->second, r.seq);
    }
    for (const auto &[stream, seq] : top) {
        send(protocol::makeCommand(protocol::commandName(protocol::Command::Ack),
                                   protocol::makeAckArguments({std::string(stream), seq}), "ack"));
        ++acksUnanswered_;
    }
    uncommitted_.clear();
}

void Ingestor::handleReturn(const Message &m)
{
    if (m.id == "ack" && acksUnanswered_ > 0) {
        // Our own acks' answers: the agent owes them, so they do not count
        // against its message rate (a report costs one message, not two).
        --acksUnanswered_;
        ++stats_.ackReplies;
        return;
    }
    if (m.id == "sync") {
        // Only the latest sync counts: everything after its return is the
        // agent's unacknowledged backlog, oldest first, then new reports.
        if (m.payload.is_number_integer() && m.payload.get<std::int64_t>() == syncId_) {
            synced_ = true;
            held_ = false;
        }
        return;
    }
    if (m.id == "info" && m.payload.is_object()) {
        // info carries the same identity as the greeting, for a host that
        // connected without the agent noticing (no greeting sent).
        Message asGreeting{Message::Kind::Event,
                           std::string(protocol::kEventGreeting),
                           m.payload,
                           nullptr,
                           {},
                           {},
                           nullptr};
        auto g = protocol::parseGreeting(asGreeting);
        if (!g) {
            invalid(g.error().message);
            return;
        }
        identity_ = g->agent;
        if (hooks_.identity)
            hooks_.identity(*identity_);
    }
}

} // namespace daxprobe::collector
