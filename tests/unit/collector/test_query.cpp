#include <catch2/catch.hpp>

#include <ctime>

#include "base/text_escape.h"
#include "collector/query.h"

using namespace daxprobe;
using namespace daxprobe::collector;

TEST_CASE("text output escapes control characters and bad UTF-8", "[collector][query]")
{
    CHECK(printable("web1") == "web1");
    CHECK(printable("caf\xc3\xa9") == "caf\xc3\xa9");
    CHECK(printable("a\x1b]0;pwned\x07") == "a\\x1b]0;pwned\\x07");
    CHECK(printable("a\nb\tc\x7f") == "a\\x0ab\\x09c\\x7f");
    CHECK(printable("\xc2\x9b"
                    "31m") == "\\xc2\\x9b31m"); // C1 CSI
    CHECK(printable("\xff\xc3") == "\\xff\\xc3");
    CHECK(printable("a\\x1b") == "a\\\\x1b"); // a literal backslash cannot pose as an escape

    VmState v;
    v.vm = "evil\x1b[2J";
    v.hostname = "h\x1b";
    v.verdict = "dax_verified";
    std::string table = latestTable({v});
    CHECK(table.find('\x1b') == std::string::npos);
    CHECK_THAT(table, Catch::Contains("evil\\x1b[2J") && Catch::Contains("h\\x1b"));

    StoredReport r;
    r.stream = "ab";
    r.verdict = "dax_verified";
    std::string hist = historyTable("vm\x1b", {r});
    CHECK(hist.find('\x1b') == std::string::npos);

    // JSON output escapes control characters itself; invalid UTF-8 must not throw.
    v.vm = "bad\xff";
    std::string text;
    CHECK_NOTHROW(text = latestJson({v}));
    CHECK(nlohmann::json::parse(text)["vms"][0]["vm"] == "bad\xef\xbf\xbd");
}

TEST_CASE("latest JSON is the document a DOM would make, host facts spliced", "[collector][query]")
{
    VmState a, b;
    a.vm = "web\"1";
    a.socket = "/run/x.sock";
    a.machineId = "m1";
    a.hostname = "h\tx";
    a.agentVersion = "0.1.0";
    a.verdict = "dax_verified";
    a.stream = "ab-1";
    a.seq = 7;
    a.reportCount = 9;
    a.droppedReports = 2;
    a.lastReportAt = 1796217422;
    a.hostFactsText = R"({"pid":7,"nvdimm":[{"size":1}]})";
    b.vm = "db";
    auto j = nlohmann::json::parse(latestJson({a, b}));
    nlohmann::json want = {{"schema", "daxprobe.collector.latest/1"},
                           {"vms",
                            {{{"vm", "web\"1"},
                              {"socket", "/run/x.sock"},
                              {"machine_id", "m1"},
                              {"hostname", "h\tx"},
                              {"agent_version", "0.1.0"},
                              {"verdict", "dax_verified"},
                              {"stream", "ab-1"},
                              {"seq", 7},
                              {"reports_stored", 9},
                              {"agent_dropped_reports", 2},
                              {"last_report", "2026-12-02T13:17:02Z"},
                              {"last_seen", "-"},
                              {"host", {{"pid", 7}, {"nvdimm", {{{"size", 1}}}}}}},
                             {{"vm", "db"},
                              {"socket", ""},
                              {"machine_id", ""},
                              {"hostname", ""},
                              {"agent_version", ""},
                              {"verdict", ""},
                              {"stream", ""},
                              {"seq", 0},
                              {"reports_stored", 0},
                              {"agent_dropped_reports", 0},
                              {"last_report", "-"},
                              {"last_seen", "-"},
                              {"host", nullptr}}}}};
    CHECK(j == want);
    CHECK(nlohmann::json::parse(latestJson({}))["vms"].empty());
}

TEST_CASE("times are UTC ISO 8601, as gmtime_r and strftime write them", "[collector][query]")
{
    for (std::int64_t t : {1LL, 59LL, 86399LL, 86400LL, 951782400LL, 951868799LL, 978307200LL,
                           1709164800LL, 1796217422LL, 4102444799LL, 253402300799LL}) {
        VmState v;
        v.lastReportAt = t;
        time_t tt = static_cast<time_t>(t);
        tm tmv{};
        gmtime_r(&tt, &tmv);
        char want[32];
        strftime(want, sizeof want, "%Y-%m-%dT%H:%M:%SZ", &tmv);
        INFO(t);
        CHECK(nlohmann::json::parse(latestJson({v}))["vms"][0]["last_report"] == want);
    }
}

TEST_CASE("history JSON splices the stored text: same document as a parse and dump",
          "[collector][query]")
{
    StoredReport a, b;
    a.stream = "ab";
    a.seq = 2;
    a.reason = "change";
    a.verdict = "problems_found";
    a.receivedAt = 1796217422;
    a.reportText = R"({"verdict":{"code":"problems_found"},"s":"\u00e9\n"})";
    a.metricsText = R"({"meminfo":{"Cached":3}})";
    b = a;
    b.seq = 1;
    b.metricsText.clear(); // stored NULL
    std::string text = historyJson("vm\"1", {a, b});
    auto j = nlohmann::json::parse(text);
    CHECK(j["schema"] == "daxprobe.collector.history/1");
    CHECK(j["vm"] == "vm\"1");
    REQUIRE(j["reports"].size() == 2);
    CHECK(j["reports"][0]["report"] == nlohmann::json::parse(a.reportText));
    CHECK(j["reports"][0]["metrics"]["meminfo"]["Cached"] == 3);
    CHECK(j["reports"][0]["received"] == "2026-12-02T13:17:02Z");
    CHECK(j["reports"][1]["seq"] == 1);
    CHECK(j["reports"][1]["metrics"].is_null());
    CHECK(nlohmann::json::parse(historyJson("x", {}))["reports"].empty());
}
