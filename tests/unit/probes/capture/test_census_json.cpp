// A capture replays a mount's DAX census to the same answer; a capture
// without one writes back without one; a mistyped field is named.
#include <catch2/catch.hpp>

#include "probes/capture/live_facts.h"
#include "probes/capture/live_json.h"

using namespace daxprobe;
using nlohmann::json;

TEST_CASE("a census round-trips through live.json", "[census][capture]")
{
    Facts facts;
    DaxCensus &c = facts.mountLive["/mnt/pmem"].census;
    c.files = 5;
    c.daxFiles = 2;
    c.inlineTail = 2;
    c.compressed = 1;
    c.exceptions = {{"/mnt/pmem/a", NotDaxReason::InlineTail},
                    {"/mnt/pmem/z", NotDaxReason::Compressed}};
    c.stoppedEarly = "stopped after 5 files";
    c.observe();
    json j = liveFactsToJson(facts);
    REQUIRE(validateLiveJson(j));
    Facts back;
    liveFactsFromJson(j, back);
    const DaxCensus &b = back.mountLive["/mnt/pmem"].census;
    CHECK(b.observed());
    CHECK(b.files == 5);
    CHECK(b.daxFiles == 2);
    CHECK(b.inlineTail == 2);
    CHECK(b.compressed == 1);
    CHECK(b.unknown == 0);
    CHECK(b.exceptions == c.exceptions);
    CHECK(b.stoppedEarly == c.stoppedEarly);
    CHECK(b.seen == 5); // not sampled: every file met was examined
    CHECK(b.sampled.empty());

    SECTION("a sampled census keeps its rule and the files it met")
    {
        c.seen = 120;
        c.sampled = "1 in 32 regular files";
        json js = liveFactsToJson(facts);
        REQUIRE(validateLiveJson(js));
        Facts s;
        liveFactsFromJson(js, s);
        CHECK(s.mountLive["/mnt/pmem"].census.seen == 120);
        CHECK(s.mountLive["/mnt/pmem"].census.sampled == "1 in 32 regular files");
    }

    Facts old;
    old.mountLive["/mnt/pmem"];
    CHECK_FALSE(liveFactsToJson(old)["mounts"]["/mnt/pmem"].contains("census"));
}

TEST_CASE("a mistyped census field is named", "[census][capture]")
{
    auto bad = [](json census) {
        auto r = validateLiveJson({{"mounts", {{"/mnt/pmem", {{"census", census}}}}}});
        REQUIRE_FALSE(r);
        return r.error().describe();
    };
    CHECK_THAT(bad({{"dax_files", "2"}}), Catch::Contains("census.dax_files"));
    CHECK_THAT(bad({{"exceptions", {{{"path", 3}}}}}), Catch::Contains("exceptions[0].path"));
}
