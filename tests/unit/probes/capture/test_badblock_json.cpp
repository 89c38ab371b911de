// A capture replays a bad-block walk to the same answer, and a hand-edited
// or hostile live.json with a mistyped field is an error naming the place.
#include <catch2/catch.hpp>

#include "probes/capture/badblock_json.h"
#include "probes/capture/live_facts.h"
#include "probes/capture/live_json.h"

using namespace daxprobe;
using nlohmann::json;

TEST_CASE("a bad-block walk round-trips through live.json", "[badblocks][capture]")
{
    Facts facts;
    BadblockScan s;
    s.disk = "pmem0";
    s.startSector = 2048;
    s.sectors = 1 << 20;
    s.ranges = {{4096, 8}};
    s.extents = {{"/mnt/pmem/f", 8192, 4096, 4096}};
    s.filesScanned = 3;
    s.stoppedEarly = "stopped after 1 files";
    s.observe();
    facts.badblockScans["/mnt/pmem"] = s;
    json j = liveFactsToJson(facts);
    REQUIRE(validateLiveJson(j));
    Facts back;
    liveFactsFromJson(j, back);
    REQUIRE(back.badblockScans.count("/mnt/pmem"));
    const BadblockScan &b = back.badblockScans["/mnt/pmem"];
    CHECK(b.observed());
    CHECK(b.disk == "pmem0");
    CHECK(b.startSector == 2048);
    CHECK(b.sectors == s.sectors);
    CHECK(b.ranges == s.ranges);
    CHECK(b.extents == s.extents);
    CHECK(b.filesScanned == 3);
    CHECK(b.stoppedEarly == s.stoppedEarly);

    BadblockScan failed;
    failed.fail("cannot open /mnt/pmem: Permission denied");
    CHECK(badblockScanFromJson(badblockScanToJson(failed)).text == failed.text);
}

TEST_CASE("a mistyped bad-block field is named", "[badblocks][capture]")
{
    auto bad = [](json scan) {
        auto r = validateLiveJson({{"badblocks", {{"/mnt/pmem", scan}}}});
        REQUIRE_FALSE(r);
        return r.error().describe();
    };
    CHECK_THAT(bad({{"ranges", {{{"sector", "8"}, {"count", 8u}}}}}),
               Catch::Contains("badblocks[\"/mnt/pmem\"].ranges[0].sector"));
    CHECK_THAT(bad({{"extents", {{{"path", 5}}}}}), Catch::Contains("extents[0].path"));
    CHECK_THAT(bad({{"extents", "x"}}), Catch::Contains("extents must be an array"));
    CHECK_THAT(bad({{"start_sector", -1}}), Catch::Contains("start_sector"));
    CHECK_FALSE(validateLiveJson({{"badblocks", json::array()}}));
}
