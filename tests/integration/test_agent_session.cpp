#include <catch2/catch.hpp>

#include "agent/daemon/agent_session.h"

using namespace daxprobe;
using nlohmann::json;

namespace
{

struct Fixture {
    json report = {{"schema", "daxprobe.check/1"},
                   {"verdict", {{"code", "dax_verified"}}},
                   {"mounts", json::array({{{"mount_point", "/mnt"},
                                            {"verdict", {{"code", "dax_active"}}}}})}};
    int checks = 0;
    AgentSession session;

    explicit Fixture(std::size_t maxPending = 64)
        : session({"mid", "guest", "abcd", "0.1"},
                  AgentHooks{[this] {
                                 ++checks;
                                 return report;
                             },
                             [] {
                                 return json{{"meminfo", {{"Cached", 1}}}};
                             }},
                  SessionOptions{.maxPending = maxPending})
    {
    }

    std::vector<protocol::Message> drain()
    {
        std::vector<protocol::Message> out;
        protocol::LineDecoder d(1 << 20);
        for (auto &f : d.feed(session.output()))
            if (f.kind == protocol::LineDecoder::Frame::Kind::Line)
                out.push_back(*protocol::decode(f.text, {}));
        session.consumed(session.output().size());
        return out;
    }

    json call(const std::string &line)
    {
        session.onBytes(line + "\n");
        auto msgs = drain();
        REQUIRE(!msgs.empty());
        const auto &m = msgs.back();
        if (m.kind == protocol::Message::Kind::Error)
            return json{{"error", m.errorClass}, {"id", m.id}};
        return json{{"return", m.payload}, {"id", m.id}};
    }
};

} // namespace

TEST_CASE("connect sends sentinel, greeting, then pending reports", "[agent][session]")
{
    Fixture f;
    f.session.produceReport("start"); // host absent: queued only
    CHECK(f.session.output().empty());
    CHECK(f.session.queue().size() == 1);
    f.session.onConnect();
    CHECK(f.session.output().front() == '\xff');
    auto msgs = f.drain();
    REQUIRE(msgs.size() == 2);
    CHECK(msgs[0].name == "greeting");
    CHECK(msgs[1].name == "report");
    auto r = protocol::parseReportEvent(msgs[1]);
    REQUIRE(r);
    CHECK(r->seq == 1);
    CHECK(r->reason == "start");
    CHECK(r->metrics["meminfo"]["Cached"] == 1);
}

TEST_CASE("new bad sectors or damaged files are a change", "[agent][session][badblocks]")
{
    Fixture f;
    f.report["namespaces"] = {{{"dev", "namespace0.0"}, {"badblock_count", 0u}}};
    f.report["mounts"][0]["badblocks"] = nullptr;
    f.session.onConnect();
    f.session.produceReport("start");
    f.report["namespaces"][0]["badblock_count"] = 8u; // the verdicts stay the same
    f.session.produceReport("interval");
    f.report["mounts"][0]["badblocks"] = {{"files", {{{"path", "/mnt/pmem/f"}}}}};
    f.session.produceReport("interval");
    f.session.produceReport("interval");
    std::vector<std::string> reasons;
    for (const auto &m : f.drain())
        if (m.name == "report")
            reasons.push_back(protocol::parseReportEvent(m)->reason);
    CHECK(reasons == std::vector<std::string>{"start", "change", "change", "interval"});
}

TEST_CASE("a periodic report that finds a changed verdict is a change", "[agent][session]")
{
    Fixture f;
    f.session.onConnect();
    f.session.produceReport("start");
    f.session.produceReport("interval"); // same verdicts
    f.report["mounts"][0]["verdict"]["code"] = "dax_not_requested";
    f.session.produceReport("interval"); // the mount changed under this check
    f.session.produceReport("interval");
    std::vector<std::string> reasons;
    for (const auto &m : f.drain())
        if (m.name == "report")
            reasons.push_back(protocol::parseReportEvent(m)->reason);
    CHECK(reasons == std::vector<std::string>{"start", "interval", "change", "interval"});
}

TEST_CASE("every command of the table is dispatched", "[agent][session]")
{
    Fixture f;
    f.session.onConnect();
    f.drain();
    for (const auto &c : protocol::commandSpecs()) {
        INFO(c.name);
        json args = c.name == "sync"  ? json{{"id", 1}}
                    : c.name == "ack" ? json{{"stream", "abcd"}, {"seq", 1}}
                                      : json::object();
        json r = f.call(protocol::makeCommand(c.name, args, 9).dump());
        CHECK(r["id"] == 9);
        CHECK(r.contains("return"));
    }
}

TEST_CASE("structured errors for unknown commands and malformed input", "[agent][session]")
{
    Fixture f;
    f.session.onConnect();
    f.drain();
    CHECK(f.call(R"({"execute":"guest-exec","id":1})")["error"] == "CommandNotFound");
    CHECK(f.call(R"({"execute":"guest-exec","id":1})")["id"] == 1);
    CHECK(f.call("not json")["error"] == "ParseError");
    CHECK(f.call("[1]")["error"] == "ParseError");
    CHECK(f.call(R"({"execute":5,"id":"x"})")["error"] == "InvalidMessage");
    CHECK(f.call(R"({"execute":5,"id":"x"})")["id"] == "x");
    CHECK(f.call(R"({"execute":"sync","arguments":{"id":"x"}})")["error"] == "InvalidParameter");
    CHECK(f.call(R"({"execute":"ack","arguments":{"seq":1}})")["error"] == "InvalidParameter");
    CHECK(f.call(R"({"event":"x"})")["error"] == "InvalidMessage");
    CHECK(f.call("{\"execute\":\"ping\",\"arguments\":" + std::string(50, '[') +
                 std::string(50, ']') + "}")["error"] == "ParseError");
    f.session.onBytes(std::string(100 * 1024, 'x') + "\n");
    auto msgs = f.drain();
    REQUIRE(msgs.size() == 1);
    CHECK(msgs[0].errorClass == "MessageTooLarge");
    CHECK(f.call(R"({"execute":"ping","id":2})")["id"] == 2); // still in sync
}

TEST_CASE("sync answers after a sentinel and resends pending reports", "[agent][session]")
{
    Fixture f;
    f.session.onConnect();
    f.session.produceReport("start");
    f.drain();
    f.session.onBytes(
        "garbage-without-newline\xff{\"execute\":\"sync\",\"arguments\":{\"id\":42}}\n");
    std::string out(f.session.output());
    CHECK(out.front() == '\xff');
    auto msgs = f.drain();
    REQUIRE(msgs.size() == 2);
    CHECK(msgs[0].payload == 42);
    CHECK(msgs[1].name == "report");
}

TEST_CASE("ack is cumulative and per stream", "[agent][session]")
{
    Fixture f;
    for (int i = 0; i < 5; ++i)
        f.session.produceReport("interval");
    f.session.onConnect();
    f.drain();
    CHECK(f.call(R"({"execute":"ack","arguments":{"stream":"ffff","seq":5}})")["return"]["acked"] ==
          0);
    CHECK(f.call(R"({"execute":"ack","arguments":{"stream":"abcd","seq":3}})")["return"]["acked"] ==
          3);
    CHECK(f.session.queue().size() == 2);
    CHECK(f.session.queue().entries().front().seq == 4);
}

TEST_CASE("the queue drops the oldest past its bound and counts", "[agent][session]")
{
    Fixture f(3);
    for (int i = 0; i < 5; ++i)
        f.session.produceReport("interval");
    CHECK(f.session.queue().size() == 3);
    CHECK(f.session.queue().dropped() == 2);
    CHECK(f.session.queue().entries().front().seq == 3);
    f.session.onConnect();
    f.drain();
    CHECK(f.call(R"({"execute":"info"})")["return"]["reports"]["dropped"] == 2);
    f.session.produceReport("interval");
    auto r = protocol::parseReportEvent(f.drain().back());
    REQUIRE(r);
    CHECK(r->droppedReports == 3);
}

TEST_CASE("recheck reports only when a verdict changes", "[agent][session]")
{
    Fixture f;
    f.session.produceReport("start");
    CHECK_FALSE(f.session.recheck());
    f.report["mounts"][0]["verdict"]["code"] = "dax_silently_off";
    CHECK(f.session.recheck());
    CHECK(f.session.lastSeq() == 2);
    CHECK_FALSE(f.session.recheck());
}

TEST_CASE("recheck reports a namespace or dax device in another mode", "[agent][session]")
{
    // fsdax -> devdax keeps the namespace's verdict: the mode is the change.
    Fixture f;
    f.report["namespaces"] = json::array({{{"dev", "namespace0.0"}, {"mode", "fsdax"}}});
    f.report["dax_devices"] = json::array();
    f.session.produceReport("start");
    f.report["namespaces"][0]["mode"] = "devdax";
    CHECK(f.session.recheck());
    CHECK_FALSE(f.session.recheck());
    f.report["dax_devices"] = json::array({{{"chardev", "dax0.0"}, {"mode", "devdax"}}});
    CHECK(f.session.recheck());
    f.report["dax_devices"][0]["mode"] = "system-ram";
    CHECK(f.session.recheck());
    CHECK(f.session.lastSeq() == 4);
}

TEST_CASE("a slow host cannot grow the output without bound", "[agent][session]")
{
    AgentSession s({"m", "h", "ab", "v"},
                   AgentHooks{[] {
                                  return json{{"pad", std::string(1000, 'x')}};
                              },
                              {}},
                   SessionOptions{.maxPending = 1000, .maxOutputBytes = 10000});
    s.onConnect();
    for (int i = 0; i < 100; ++i)
        s.produceReport("interval");
    CHECK(s.output().size() <= 10000);
    CHECK(s.outputDropped() > 0);
    CHECK(s.queue().size() == 100); // still queued for a resend
}
