// What peak RSS leaves out (issue 44, item 4), on the counts a real guest
// gave: tests/fixtures/fsdax-ext4/_vm/profile-cmd.json (Debian 12's 6.1: a
// command that wrote 64 MiB through a DAX mapping, 16 PMD faults all fallen
// back, 16384 PTE faults, peak RSS 1388 kB).
#include <catch2/catch.hpp>

#include "probes/judges/dax_rss.h"

using namespace daxprobe;

TEST_CASE("dax rss: DAX faults are named beside peak RSS", "[profile][dax_rss]")
{
    FaultCounts c;
    c.pmdFaults = 16;
    c.pmdFallbacks = 16;
    c.pteFaults = 16384;
    auto n = judgeDaxRss(c, 1388);
    REQUIRE(n);
    CHECK(n->daxFaults == 16384); // a fallen-back PMD fault maps nothing itself
    CHECK(n->mappedBytesUpTo == 64ull << 20);
    CHECK_THAT(n->text, Catch::Contains("peak RSS (1388 kB) leaves out"));
    CHECK_THAT(n->text, Catch::Contains("up to 64.0 MiB"));

    // PMD faults that did not fall back map 2 MiB each.
    c.pmdFallbacks = 0;
    c.pteFaults = 0;
    n = judgeDaxRss(c, 1388);
    REQUIRE(n);
    CHECK(n->mappedBytesUpTo == 32ull << 20);
}

TEST_CASE("dax rss: nothing to say without a DAX fault", "[profile][dax_rss]")
{
    FaultCounts none; // tracepoints not counted (tracefs missing, --no-perf)
    CHECK_FALSE(judgeDaxRss(none, 2496));
    FaultCounts zero;
    zero.pmdFaults = 0;
    zero.pmdFallbacks = 0;
    zero.pteFaults = 0; // counted: the command mapped nothing through DAX
    CHECK_FALSE(judgeDaxRss(zero, 2496));
    FaultCounts fellBack;
    fellBack.pmdFaults = 3;
    fellBack.pmdFallbacks = 5; // more fallbacks than faults: never negative
    fellBack.pteFaults = 0;
    CHECK_FALSE(judgeDaxRss(fellBack, 2496));
    // A peak RSS that could hold what DAX mapped: nothing is claimed (a
    // kernel that counts DAX pages in RSS).
    FaultCounts counted;
    counted.pteFaults = 16384; // up to 64 MiB
    CHECK_FALSE(judgeDaxRss(counted, 40000));
    CHECK(judgeDaxRss(counted, 30000)); // below 32 MiB
}
