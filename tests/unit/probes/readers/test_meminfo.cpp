#include <catch2/catch.hpp>

#include "probes/readers/meminfo.h"
#include "probes/readers/vmstat.h"

using namespace daxprobe;

TEST_CASE("meminfo values are converted from kB to bytes", "[parser][meminfo]")
{
    auto m = parseMeminfo("MemTotal:         485512 kB\nCached:            11340 kB\n"
                          "HugePages_Total:       0\nHugepagesize:       2048 kB\n");
    REQUIRE(m);
    CHECK(m->at("MemTotal") == 485512ULL * 1024);
    CHECK(m->at("Cached") == 11340ULL * 1024);
    CHECK(m->at("HugePages_Total") == 0); // a count, not kB
    CHECK(m->at("Hugepagesize") == 2048ULL * 1024);
}

TEST_CASE("malformed meminfo is an error naming the line", "[parser][meminfo]")
{
    CHECK_FALSE(parseMeminfo(""));
    auto noColon = parseMeminfo("MemTotal: 1 kB\nGarbage line\n");
    REQUIRE_FALSE(noColon);
    CHECK_THAT(noColon.error().message, Catch::Contains("line 2"));
    CHECK_FALSE(parseMeminfo("Cached: twelve kB\n"));
    CHECK_FALSE(parseMeminfo("Cached: 12 MB\n"));
    CHECK_FALSE(parseMeminfo("Cached: -5 kB\n"));
    CHECK_FALSE(parseMeminfo("Cached: 99999999999999999999 kB\n"));
    CHECK_FALSE(parseMeminfo(":12 kB\n"));
    CHECK_FALSE(parseMeminfo("Cached:\n"));
}

TEST_CASE("truncated meminfo keeps what is whole", "[parser][meminfo]")
{
    // A read cut mid-number still parses as a number, but a cut mid-unit does not.
    auto m = parseMeminfo("MemTotal: 100 kB\nCached: 12");
    REQUIRE(m);
    CHECK(m->at("Cached") == 12);
    CHECK_FALSE(parseMeminfo("MemTotal: 100 kB\nCached: 12 k"));
}

TEST_CASE("vmstat parses counters and rejects garbage", "[parser][vmstat]")
{
    auto v = parseVmstat("pgfault 1234\npgmajfault 56\nnr_dirty -1\n");
    REQUIRE(v);
    CHECK(v->at("pgfault") == 1234);
    CHECK(v->at("pgmajfault") == 56);
    CHECK(v->at("nr_dirty") == 0); // transiently negative per-cpu sum clamps to 0
    CHECK_FALSE(parseVmstat(""));
    CHECK_FALSE(parseVmstat("pgfault\n"));
    CHECK_FALSE(parseVmstat("pgfault 12 13\n"));
    CHECK_FALSE(parseVmstat("pgfault x\n"));
}
