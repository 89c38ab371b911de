// protocol::summarizeReport reads untrusted guest JSON on the collector's
// hot path: it must say what a DOM says of the same text, on real reports
// and on hostile ones.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include "protocol/json_text.h"
#include "protocol/report_summary.h"
#include "tests/fuzz/report_summary_twin.h"

using namespace daxprobe::protocol;
using nlohmann::json;

namespace
{

std::string slurp(const std::string &path)
{
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

// The text reader, with the validator's spans and without, against the DOM.
ReportSummary agreed(const std::string &text)
{
    INFO("report: " << text);
    JsonSpans spans;
    auto valid = validateJson(text, 64, &spans);
    REQUIRE(valid);
    ReportSummary fast = summarizeReport(*valid, &spans);
    CHECK(fast == summarizeReport(*valid));
    CHECK(fast == summaryFromDom(json::parse(text)));
    return fast;
}

} // namespace

TEST_CASE("the summary of a real report", "[protocol][summary]")
{
    auto s = agreed(slurp(REPORT_FIXTURES "/fsdax-ext4/expected.json"));
    CHECK(s.code == "dax_verified");
    REQUIRE(s.mounts.size() == 1);
    CHECK(s.mounts[0] == ReportSummary::Mount{"/mnt/pmem", "dax_active", "pmem0", std::nullopt});
    REQUIRE(s.namespaces.size() == 1);
    CHECK(s.namespaces[0] ==
          ReportSummary::Namespace{"namespace0.0", "pmem0", 526385152, "dax_capable", 0});
    CHECK(s.pageCacheBytes == 26628096);

    // The kernel's NVDIMM test bus (issue 36): six DIMMs, one not armed.
    auto nfit = agreed(slurp(REPORT_FIXTURES "/nfit-test-nfit/expected.json"));
    REQUIRE(nfit.dimms.size() == 6);
    CHECK(nfit.dimms[0] == ReportSummary::Dimm{"nmem0", 42, "dimm_ok", "", std::nullopt});
    CHECK(nfit.dimms[4] ==
          ReportSummary::Dimm{"nmem4", 42, "dimm_not_persistent", "", std::nullopt});

    auto raw = agreed(slurp(REPORT_FIXTURES "/raw-xfs/expected.json"));
    REQUIRE_FALSE(raw.mounts.empty());
    CHECK(raw.mounts[0].code == "dax_silently_off");
}

TEST_CASE("the summary of hostile reports", "[protocol][summary]")
{
    // Any shape: absent or mistyped reads as unknown / empty / nullopt.
    for (const char *text :
         {"{}", "[]", "5", "null", R"({"verdict":"x"})", R"({"verdict":{"code":5}})",
          R"({"verdict":[{"code":"a"}]})", R"({"mounts":{"verdict":{"code":"a"}}})",
          R"({"mounts":[1,"x",[],null]})", R"({"namespaces":[{"dev":7,"size":-1,"blockdev":{}}]})",
          R"({"namespaces":[{"size":1.5},{"size":18446744073709551616}]})",
          R"({"meminfo":{"Cached":"12"}})", R"({"meminfo":[1]})"}) {
        auto s = agreed(text);
        CHECK(s.code == "unknown");
        CHECK(!s.pageCacheBytes);
    }
    auto typed = agreed(R"({"mounts":[1,"x",[],null]})");
    CHECK(typed.mounts.size() == 4);
    CHECK(typed.mounts[3] == ReportSummary::Mount{"", "unknown", "", std::nullopt});

    // Codes sanitized like an identifier; names decoded, not cleaned.
    auto s = agreed(R"({"verdict":{"code":"a b\u0001\u00e9)" + std::string(100, 'x') +
                    R"("},"mounts":[{"mount_point":"/m\nx","verdict":{"code":"dax_active"}}]})");
    CHECK(s.code.size() == 64);
    CHECK(s.code.starts_with("a_b___")); // U+00E9 is two bytes, each cleaned
    CHECK(s.mounts[0].key == "/m\nx");

    // A repeated key counts with its last value, at every level.
    s = agreed(R"({"verdict":{"code":"a"},"verdict":{"code":"b","code":"c"},
                   "mounts":[{"verdict":{"code":"x"},"verdict":{}}],
                   "meminfo":{"Cached":1,"Cached":"2"},
                   "namespaces":[],"namespaces":[{"dev":"n","dev":"m","size":1,"size":2}]})");
    CHECK(s.code == "c");
    CHECK(s.mounts[0].code == "unknown");
    CHECK(!s.pageCacheBytes);
    REQUIRE(s.namespaces.size() == 1);
    CHECK(s.namespaces[0].dev == "m");
    CHECK(s.namespaces[0].size == 2);

    // Bad blocks: a namespace's count, a mount's damaged files counted;
    // a badblocks that is not an object is none, one without files is 0.
    s = agreed(R"({"namespaces":[{"badblock_count":8},{"badblock_count":"8"}],
                   "mounts":[{"badblocks":{"files":[{},1,"x"]}},{"badblocks":null},
                             {"badblocks":{"files":{}}},{"badblocks":[1]},
                             {"badblocks":{"files":[1]},"badblocks":{}}]})");
    REQUIRE(s.namespaces.size() == 2);
    CHECK(s.namespaces[0].badblocks == 8);
    CHECK(!s.namespaces[1].badblocks);
    REQUIRE(s.mounts.size() == 5);
    CHECK(s.mounts[0].damagedFiles == 3);
    CHECK(!s.mounts[1].damagedFiles);
    CHECK(s.mounts[2].damagedFiles == 0);
    CHECK(!s.mounts[3].damagedFiles);
    CHECK(s.mounts[4].damagedFiles == 0);

    // A DIMM's health: its state bounded like an identifier, the live count;
    // a repeated "health" counts whole, the last one.
    s = agreed(R"({"dimms":[{"dev":"nmem1","health":{"health_state":"fatal","shutdown_count":43}},
                            {"dev":"nmem2","health":{"health_state":"bad state)" +
               std::string(40, 'y') + R"("}},
                            {"dev":"nmem3","health":[1]},
                            {"dev":"nmem4","health":{"shutdown_count":1},"health":{}},
                            {"dev":"nmem5","health":{"shutdown_count":-1,"health_state":7}}]})");
    REQUIRE(s.dimms.size() == 5);
    CHECK(s.dimms[0].healthState == "fatal");
    CHECK(s.dimms[0].shutdownCount == 43);
    CHECK(s.dimms[1].healthState.size() == 32);
    CHECK(s.dimms[1].healthState.starts_with("bad_state"));
    CHECK(s.dimms[2].healthState.empty());
    CHECK(!s.dimms[3].shutdownCount);
    CHECK(s.dimms[4].healthState.empty());
    CHECK(!s.dimms[4].shutdownCount);

    // Escaped keys mean what they decode to.
    s = agreed(R"({"v\u0065rdict":{"c\u006fde":"ok"},"meminfo":{"C\u0061ched":7}})");
    CHECK(s.code == "ok");
    CHECK(s.pageCacheBytes == 7);
}

TEST_CASE("the summary of text that is not JSON reads nothing", "[protocol][summary]")
{
    for (const char *text : {"", "{", "{\"verdict\":{\"code\":\"a\"", "not json", "[{\"x\":1}"}) {
        INFO(text);
        auto s = summarizeReport(text);
        CHECK(s.mounts.empty());
        CHECK(s.namespaces.empty());
    }
}
