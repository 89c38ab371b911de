#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "collector/ingest.h"

using namespace daxprobe;
using namespace daxprobe::collector;
using nlohmann::json;

namespace
{

struct Harness {
    std::map<std::pair<std::string, std::uint64_t>, json> stored;
    bool failStore = false;
    int commits = 0;
    std::optional<protocol::AgentIdentity> id;
    Ingestor ing;

    explicit Harness(IngestLimits lim = {})
        : ing(lim, IngestHooks{[this](const protocol::AgentIdentity &i) { id = i; }})
    {
    }

    // The collector's path for one guest: receive, process, commit uncommitted()
    // in one transaction, afterCommit().
    void feed(std::string_view data)
    {
        ing.receive(data);
        ing.process(SIZE_MAX);
        commit();
    }
    void commit()
    {
        if (ing.uncommitted().empty())
            return;
        ++commits;
        if (failStore)
            return ing.afterCommit(fail("disk full", 28));
        for (auto &p : ing.uncommitted())
            p.receipt = stored.emplace(std::make_pair(p.record.stream, p.record.seq),
                                       json::parse(p.record.reportText))
                                .second
                            ? Receipt::Stored
                            : Receipt::Duplicate;
        ing.afterCommit({});
    }

    // Every command the ingestor sent, decoded.
    std::vector<protocol::Message> sent()
    {
        std::vector<protocol::Message> out;
        protocol::LineDecoder d(1 << 20);
        for (auto &f : d.feed(ing.takeOutput()))
            if (f.kind == protocol::LineDecoder::Frame::Kind::Line)
                out.push_back(*protocol::decode(f.text, {}));
        return out;
    }
};

std::string reportLine(std::uint64_t seq, const char *stream = "abc")
{
    return protocol::encode(protocol::makeReportEvent(
        {stream, seq, "interval", {{"verdict", {{"code", "dax_verified"}}}}, nullptr, 0}));
}

} // namespace

TEST_CASE("start sends sentinel, sync and info", "[collector][ingest]")
{
    Harness h;
    h.ing.start(77);
    std::string out(h.ing.output());
    CHECK(out.front() == '\xff');
    auto cmds = h.sent();
    REQUIRE(cmds.size() == 2);
    CHECK(cmds[0].name == "sync");
    CHECK(cmds[0].payload["id"] == 77);
    CHECK(cmds[1].name == "info");
    h.feed("\xff" + protocol::encode(protocol::makeReturn(77, "sync")));
    CHECK(h.ing.synced());
}

TEST_CASE("reports are acked after they are stored, resends are acked but not stored twice",
          "[collector][ingest]")
{
    Harness h;
    h.feed(reportLine(1) + reportLine(2) + reportLine(1));
    CHECK(h.stored.size() == 2);
    CHECK(h.commits == 1); // one transaction for all three
    auto acks = h.sent();
    // Acks are cumulative: one for the stream's highest seq says it all.
    REQUIRE(acks.size() == 1);
    CHECK(acks[0].name == "ack");
    CHECK(acks[0].payload["stream"] == "abc");
    CHECK(acks[0].payload["seq"] == 2);
    CHECK(h.ing.stats().stored == 2);
    CHECK(h.ing.stats().duplicates == 1);
    // A resend alone is acked again, never stored twice.
    h.feed(reportLine(1));
    acks = h.sent();
    REQUIRE(acks.size() == 1);
    CHECK(acks[0].payload["seq"] == 1);
    CHECK(h.stored.size() == 2);
}

TEST_CASE("acks come from the receipts: one left NotStored acks none", "[collector][ingest][batch]")
{
    Harness h;
    h.ing.receive(reportLine(1) + reportLine(2) + reportLine(1, "def"));
    CHECK(h.ing.process(SIZE_MAX) == 3);
    auto reports = h.ing.uncommitted();
    REQUIRE(reports.size() == 3);
    // A commit that says it went through but left a receipt unfilled: the
    // ack of stream abc would cover seq 2, which no receipt says is stored.
    reports[0].receipt = Receipt::Stored;
    reports[2].receipt = Receipt::Duplicate;
    h.ing.afterCommit({});
    CHECK(h.sent().empty());
    CHECK(h.ing.held());

    // Every receipt filled: one ack per stream, Duplicate counted, not stored.
    h.ing.resync(5);
    (void)h.sent();
    h.ing.receive(protocol::encode(protocol::makeReturn(5, "sync")) + reportLine(1) +
                  reportLine(2) + reportLine(1, "def"));
    h.ing.process(SIZE_MAX);
    for (auto &p : h.ing.uncommitted())
        p.receipt = p.record.stream == "def" ? Receipt::Duplicate : Receipt::Stored;
    h.ing.afterCommit({});
    auto acks = h.sent();
    REQUIRE(acks.size() == 2);
    CHECK(acks[0].payload == json{{"stream", "abc"}, {"seq", 2}});
    CHECK(acks[1].payload == json{{"stream", "def"}, {"seq", 1}});
    CHECK(h.ing.stats().stored == 2);
    CHECK(h.ing.stats().duplicates == 1);
}

TEST_CASE("nothing is acked before the commit; a failed commit acks none of the batch",
          "[collector][ingest][batch]")
{
    Harness h;
    h.ing.receive(reportLine(1) + reportLine(2, "def") + reportLine(3));
    CHECK(h.ing.process(SIZE_MAX) == 3);
    REQUIRE(h.ing.uncommitted().size() == 3);
    CHECK(h.sent().empty()); // handled, validated, but not committed: no ack
    CHECK(h.stored.empty());

    // The collector commits everything at once and reports the outcome.
    h.ing.afterCommit(fail("database is locked", 5));
    CHECK(h.sent().empty());
    CHECK(h.ing.held());
    CHECK(h.ing.uncommitted().empty());
    CHECK(h.ing.stats().storeErrors == 1);
    CHECK(h.ing.stats().deferred == 2);

    // After the resync the agent resends; this commit works: acked, per stream.
    h.ing.resync(5);
    (void)h.sent();
    h.feed(protocol::encode(protocol::makeReturn(5, "sync")) + reportLine(1) +
           reportLine(2, "def") + reportLine(3));
    CHECK_FALSE(h.ing.held());
    auto acks = h.sent();
    REQUIRE(acks.size() == 2);
    CHECK(acks[0].payload["stream"] == "abc");
    CHECK(acks[0].payload["seq"] == 3);
    CHECK(acks[1].payload["stream"] == "def");
    CHECK(acks[1].payload["seq"] == 2);
}

TEST_CASE("the agent's answers to acks are counted apart (free of its rate)",
          "[collector][ingest][rate]")
{
    Harness h;
    h.feed(reportLine(1) + reportLine(2));
    REQUIRE(h.sent().size() == 1); // one ack owed an answer
    json answer = protocol::makeReturn({{"acked", 2}, {"pending", 0}}, "ack");
    h.feed(protocol::encode(answer));
    CHECK(h.ing.stats().ackReplies == 1);
    // An answer to an ack never sent is not free: a guest cannot flood with them.
    h.feed(protocol::encode(answer) + protocol::encode(answer));
    CHECK(h.ing.stats().ackReplies == 1);
    CHECK(h.ing.stats().messages == 5);
}

TEST_CASE("a report that fails to commit is not acked", "[collector][ingest]")
{
    Harness h;
    h.failStore = true;
    h.feed(reportLine(1));
    CHECK(h.sent().empty());
    CHECK(h.ing.stats().storeErrors == 1);
    CHECK_FALSE(h.ing.violation());
}

TEST_CASE("greeting and info return set the identity", "[collector][ingest]")
{
    Harness h;
    h.feed(protocol::encode(protocol::makeGreeting({"m1", "g1", "ab", "0.1"}, {})));
    REQUIRE(h.id);
    CHECK(h.id->hostname == "g1");
    json info = {{"protocol", 1},
                 {"agent", {{"machine_id", "m2"}, {"hostname", "g2"}, {"stream", "cd"}}}};
    h.feed(protocol::encode(protocol::makeReturn(info, "info")));
    CHECK(h.id->machineId == "m2");
}

TEST_CASE("wrong protocol version is a violation", "[collector][ingest]")
{
    Harness h;
    json g = protocol::makeGreeting({"m1", "g1", "ab", "0.1"}, {});
    g["data"]["protocol"] = 99;
    h.feed(protocol::encode(g));
    CHECK(h.ing.violation());
}

TEST_CASE("split reads and a half line before the sentinel are handled", "[collector][ingest]")
{
    Harness h;
    std::string line = reportLine(5);
    h.feed("{\"event\":\"report\",\"da"); // tail of an earlier connection
    h.feed("\xff");
    for (std::size_t i = 0; i < line.size(); i += 7)
        h.feed(std::string_view(line).substr(i, 7));
    CHECK(h.stored.size() == 1);
    CHECK(h.ing.stats().invalid == 0);
}

TEST_CASE("garbage beyond the tolerance is a violation, and input is then ignored",
          "[collector][ingest]")
{
    IngestLimits lim;
    lim.maxInvalid = 3;
    Harness h(lim);
    h.feed("junk\n{]\n[1]\n");
    CHECK_FALSE(h.ing.violation());
    h.feed("{\"execute\":\"x\"}\n"); // a guest must not send commands
    REQUIRE(h.ing.violation());
    h.feed(reportLine(1));
    CHECK(h.stored.empty());
}

TEST_CASE("an oversize line is a violation at once, without buffering it", "[collector][ingest]")
{
    IngestLimits lim;
    lim.message.maxMessageBytes = 1000;
    Harness h(lim);
    h.feed(std::string(999, 'x'));
    CHECK_FALSE(h.ing.violation());
    h.feed(std::string(10, 'x'));
    CHECK(h.ing.violation());
}

TEST_CASE("too deep and bad report fields count as invalid", "[collector][ingest]")
{
    Harness h;
    h.feed("{\"event\":\"report\",\"data\":" + std::string(100, '[') + std::string(100, ']') +
           "}\n");
    h.feed("{\"event\":\"report\",\"data\":{\"stream\":\"ab\",\"seq\":-1,\"report\":{}}}\n");
    CHECK(h.ing.stats().invalid == 2);
    CHECK(h.stored.empty());
    // Unknown events are future features, not offences.
    h.feed("{\"event\":\"future\",\"data\":{}}\n");
    CHECK(h.ing.stats().invalid == 2);
}

namespace
{

// The highest seq acknowledged so far for `stream` (acks are cumulative).
std::uint64_t highestAck(const std::vector<protocol::Message> &sent, const std::string &stream)
{
    std::uint64_t top = 0;
    for (const auto &m : sent)
        if (m.name == "ack" && m.payload["stream"] == stream)
            top = std::max(top, m.payload["seq"].get<std::uint64_t>());
    return top;
}

} // namespace

TEST_CASE("after a store error no ack covers the failed report until it is stored",
          "[collector][ingest][store-error]")
{
    std::set<std::uint64_t> failOnce = {2};
    std::map<std::uint64_t, json> stored;
    Ingestor ing({}, IngestHooks{});
    auto store = [&](std::span<BatchEntry> batch) -> Result<void> {
        for (const auto &p : batch)
            if (failOnce.erase(p.record.seq))
                return fail("database is locked", 5);
        for (auto &p : batch)
            p.receipt = stored.emplace(p.record.seq, json::parse(p.record.reportText)).second
                            ? Receipt::Stored
                            : Receipt::Duplicate;
        return {};
    };
    auto feed = [&](std::string_view data) {
        ing.receive(data);
        ing.process(SIZE_MAX);
        if (!ing.uncommitted().empty())
            ing.afterCommit(store(ing.uncommitted()));
    };
    std::vector<protocol::Message> sent;
    auto collect = [&] {
        protocol::LineDecoder d(1 << 20);
        for (auto &f : d.feed(ing.takeOutput()))
            if (f.kind == protocol::LineDecoder::Frame::Kind::Line)
                sent.push_back(*protocol::decode(f.text, {}));
    };
    // Every ack must cover only stored reports: the agent forgets all <= seq.
    auto acksOnlyStored = [&] {
        for (std::uint64_t s = 1; s <= highestAck(sent, "abc"); ++s)
            if (!stored.count(s))
                return false;
        return true;
    };

    ing.start(1);
    feed(reportLine(1));
    feed(reportLine(2) + reportLine(3) + reportLine(4)); // one transaction: fails
    collect();
    CHECK(stored.count(1) == 1);
    CHECK_FALSE(stored.count(2)); // failed
    CHECK(ing.held());
    CHECK(highestAck(sent, "abc") == 1);
    CHECK(acksOnlyStored());
    CHECK(ing.stats().storeErrors == 1);
    CHECK(ing.stats().deferred == 2); // 3 and 4 not even tried

    // New reports keep coming: still nothing acked past 1.
    feed(reportLine(5));
    collect();
    CHECK(highestAck(sent, "abc") == 1);
    CHECK(ing.held());

    // A stale sync return (the start one, id 1, arriving late) does not release.
    ing.resync(9);
    collect();
    REQUIRE(sent.back().name == "sync");
    CHECK(sent.back().payload["id"] == 9);
    feed(protocol::encode(protocol::makeReturn(1, "sync")));
    CHECK(ing.held());

    // The agent answers the resync and resends everything unacked, in order.
    feed("\xff" + protocol::encode(protocol::makeReturn(9, "sync")));
    CHECK_FALSE(ing.held());
    for (std::uint64_t s = 2; s <= 5; ++s)
        feed(reportLine(s));
    collect();
    CHECK(stored.size() == 5);
    CHECK(highestAck(sent, "abc") == 5);
    CHECK(acksOnlyStored());
}

TEST_CASE("receive queues lines and process handles a bounded number",
          "[collector][ingest][fairness]")
{
    Harness h;
    std::string many;
    for (std::uint64_t s = 1; s <= 10; ++s)
        many += reportLine(s);
    h.ing.receive(many + "{\"event\":\"report\",\"da"); // and a partial line
    CHECK(h.ing.backlog() == 10);
    CHECK(h.stored.empty());
    CHECK(h.ing.bufferedBytes() >= many.size());
    CHECK(h.ing.process(3) == 3);
    CHECK(h.ing.uncommitted().size() == 3);
    CHECK(h.ing.backlog() == 7);
    CHECK(h.ing.process(100) == 7);
    h.commit();
    CHECK(h.stored.size() == 10);
    CHECK(h.ing.bufferedBytes() == std::string("{\"event\":\"report\",\"da").size());
}
