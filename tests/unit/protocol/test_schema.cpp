#include <catch2/catch.hpp>

#include "protocol/schema.h"

using namespace daxprobe::protocol;

namespace
{
Message roundTrip(const json &j)
{
    std::string line = encode(j);
    line.pop_back();
    auto m = decode(line, Limits{});
    REQUIRE(m);
    return *m;
}
} // namespace

TEST_CASE("command table has the required read-only commands", "[protocol][schema]")
{
    std::vector<std::string> names;
    for (const auto &c : commandSpecs())
        names.emplace_back(c.name);
    for (const char *required : {"ping", "info", "sync", "check", "metrics", "ack"})
        CHECK(std::find(names.begin(), names.end(), required) != names.end());
}

TEST_CASE("greeting round trip", "[protocol][schema]")
{
    AgentIdentity id{"0123abcd", "guest1", "5f3e-01", "0.1.0"};
    auto g = parseGreeting(roundTrip(makeGreeting(id, Limits{})));
    REQUIRE(g);
    CHECK(g->protocol == kProtocolVersion);
    CHECK(g->agent.machineId == "0123abcd");
    CHECK(g->agent.hostname == "guest1");
    CHECK(g->agent.stream == "5f3e-01");
    CHECK(g->capabilities["sentinel"] == true);
    CHECK(g->capabilities["commands"].size() == commandSpecs().size());
}

TEST_CASE("greeting identity is sanitised and bounded", "[protocol][schema]")
{
    json g = makeGreeting({"m", "h", "ab", "v"}, Limits{});
    g["data"]["agent"]["hostname"] = std::string(1000, 'h') + "\x01";
    g["data"]["agent"]["machine_id"] = "a b\tc";
    auto p = parseGreeting(roundTrip(g));
    REQUIRE(p);
    CHECK(p->agent.hostname.size() == 255);
    CHECK(p->agent.machineId == "a_b_c");
}

TEST_CASE("report event round trip", "[protocol][schema]")
{
    ReportEnvelope r{"abc123", 42, "interval", {{"schema", "daxprobe.check/1"}}, {{"x", 1}}, 3};
    auto p = parseReportEvent(roundTrip(makeReportEvent(r)));
    REQUIRE(p);
    CHECK(p->stream == "abc123");
    CHECK(p->seq == 42);
    CHECK(p->reason == "interval");
    CHECK(p->report["schema"] == "daxprobe.check/1");
    CHECK(p->metrics["x"] == 1);
    CHECK(p->droppedReports == 3);
}

TEST_CASE("report events with bad fields are refused", "[protocol][schema]")
{
    json base = makeReportEvent({"abc", 1, "start", json::object(), nullptr, 0});
    auto bad = [&](auto mutate) {
        json j = base;
        mutate(j["data"]);
        return !parseReportEvent(roundTrip(j));
    };
    CHECK(bad([](json &d) { d["seq"] = 0; }));
    CHECK(bad([](json &d) { d["seq"] = -1; }));
    CHECK(bad([](json &d) { d["seq"] = 1.5; }));
    CHECK(bad([](json &d) { d["seq"] = "1"; }));
    CHECK(bad([](json &d) { d["seq"] = (1ULL << 53) + 1; }));
    CHECK(bad([](json &d) { d.erase("seq"); }));
    CHECK(bad([](json &d) { d["stream"] = "UPPER"; }));
    CHECK(bad([](json &d) { d["stream"] = std::string(65, 'a'); }));
    CHECK(bad([](json &d) { d["stream"] = 1; }));
    CHECK(bad([](json &d) { d["report"] = "x"; }));
    CHECK(bad([](json &d) { d.erase("report"); }));
    CHECK_FALSE(parseReportEvent(roundTrip(makeEvent("greeting", json::object()))));
}

TEST_CASE("ack arguments round trip and validation", "[protocol][schema]")
{
    auto a = parseAckArguments(makeAckArguments({"ff00", 9}));
    REQUIRE(a);
    CHECK(a->stream == "ff00");
    CHECK(a->seq == 9);
    CHECK_FALSE(parseAckArguments(json::object()));
    CHECK_FALSE(parseAckArguments({{"stream", "ff"}, {"seq", "9"}}));
}
