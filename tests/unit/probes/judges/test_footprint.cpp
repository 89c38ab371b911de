#include <catch2/catch.hpp>

#include <csignal>
#include <sys/wait.h>

#include "probes/judges/footprint.h"

using namespace daxprobe;

namespace
{

constexpr std::int64_t MiB = 1 << 20;

FootprintInput input(bool dax, std::int64_t touched, std::optional<std::int64_t> cached,
                     std::optional<std::int64_t> resident = std::nullopt)
{
    FootprintInput in;
    in.dax = dax;
    in.bytesTouched = static_cast<std::uint64_t>(touched);
    in.cachedDeltaBytes = cached;
    in.residentDeltaBytes = resident;
    return in;
}

} // namespace

TEST_CASE("vmstat deltas are after minus before, signed, named counters only", "[footprint]")
{
    Vmstat before{{"pgfault", 1000}, {"pgmajfault", 7}, {"nr_dirty", 50}, {"pgpgin", 3}};
    Vmstat after{{"pgfault", 1513}, {"pgmajfault", 7}, {"nr_dirty", 20}};
    auto d = vmstatDelta(before, after, {"pgfault", "pgmajfault", "nr_dirty", "pgpgin", "absent"});
    CHECK(d.at("pgfault") == 513);
    CHECK(d.at("pgmajfault") == 0);
    CHECK(d.at("nr_dirty") == -30); // a gauge can shrink
    CHECK(d.count("pgpgin") == 0);  // gone after: not a made-up 0 or -3
    CHECK(d.count("absent") == 0);
    CHECK(d.size() == 3);
}

TEST_CASE("meminfo fields in kB and their deltas", "[footprint]")
{
    Meminfo before{{"Cached", 100 * 1024}, {"Buffers", 8 * 1024}};
    Meminfo after{{"Cached", 32868 * 1024}, {"Buffers", 4 * 1024}};
    CHECK(meminfoKb(after, "Cached") == 32868);
    CHECK(meminfoDeltaKb(before, after, "Cached") == 32768);
    CHECK(meminfoDeltaKb(before, after, "Buffers") == -4);
    CHECK_FALSE(meminfoDeltaKb(before, after, "MemAvailable"));
    CHECK_FALSE(meminfoKb(Meminfo{}, "Cached"));
}

TEST_CASE("a child's end: its status passed on, 128+N for a signal", "[footprint]")
{
    ChildEnd ok = decodeWaitStatus(3 << 8); // exit(3)
    CHECK(ok.exitStatus == 3);
    CHECK_FALSE(ok.signal);
    CHECK(ok.passOn == 3);
    ChildEnd killed = decodeWaitStatus(SIGKILL);
    CHECK(killed.signal == SIGKILL);
    CHECK_FALSE(killed.exitStatus);
    CHECK(killed.passOn == 128 + SIGKILL);
    CHECK(decodeWaitStatus(0).passOn == 0);
}

TEST_CASE("perf numbers win when perf counted; rusage otherwise, and says so", "[footprint]")
{
    FaultNumbers perf = chooseFaults(4200, 1, 4300, 2);
    CHECK(perf.source == "perf");
    CHECK(perf.minor == 4200);
    CHECK(perf.major == 1);
    FaultNumbers fallback = chooseFaults(std::nullopt, std::nullopt, 4300, 2);
    CHECK(fallback.source == "rusage");
    CHECK(fallback.minor == 4300);
    CHECK(fallback.major == 2);
    // Half a perf reading is no reading.
    CHECK(chooseFaults(4200, std::nullopt, 4300, 2).source == "rusage");
}

// The numbers of vm-testbed.md: reading 32 MiB after dropping caches, Cached
// +0 kB on DAX, +32732 kB on ext4 dax=never.
TEST_CASE("footprint verdicts from page-cache growth against bytes touched", "[footprint]")
{
    CHECK(judgeFootprint(input(true, 32 * MiB, 0)).code == "no_page_cache");
    CHECK(judgeFootprint(input(true, 32 * MiB, 3 * MiB)).code == "no_page_cache"); // < 1/8: noise
    CHECK(judgeFootprint(input(true, 32 * MiB, 4 * MiB)).code == "dax_but_cache_grew");
    CHECK(judgeFootprint(input(false, 32 * MiB, 32732 * 1024)).code == "page_cache");
    CHECK(judgeFootprint(input(false, 32 * MiB, 24 * MiB)).code == "page_cache"); // exactly 3/4
    CHECK(judgeFootprint(input(false, 32 * MiB, 24 * MiB - 4096)).code == "cache_not_grown");
    CHECK(judgeFootprint(input(false, 32 * MiB, std::nullopt)).code == "unknown");
    CHECK(judgeFootprint(input(true, 0, 0)).code == "unknown");

    // The file's own residency is exact; system-wide Cached only stands in.
    FootprintVerdict v = judgeFootprint(input(false, 32 * MiB, 1 * MiB, 32 * MiB));
    CHECK(v.code == "page_cache");
    CHECK_THAT(v.summary, Catch::Contains("the file's residency grew by 32768 kB for 32768 kB"));
    CHECK(judgeFootprint(input(false, 32 * MiB, 40 * MiB, 0)).code == "cache_not_grown");
    CHECK_THAT(judgeFootprint(input(true, 32 * MiB, 0)).summary, Catch::Contains("meminfo Cached"));
}

TEST_CASE("phase verdicts combine into one, or into 'mixed' naming each", "[footprint]")
{
    FootprintVerdict none{"no_page_cache", ""}, cache{"page_cache", ""};
    CHECK(combineFootprints({{"read", none}, {"mmap_read", none}, {"mmap_write", none}}).code ==
          "no_page_cache");
    FootprintVerdict mixed = combineFootprints({{"read", none}, {"mmap_read", cache}});
    CHECK(mixed.code == "mixed");
    CHECK(mixed.summary == "read: no_page_cache, mmap_read: page_cache");
    CHECK(combineFootprints({}).code == "unknown");
}

TEST_CASE("exercise sizes: suffixes, whole 2 MiB extents, clear errors", "[footprint]")
{
    CHECK(parseExerciseSize("32M").value() == 32 * MiB);
    CHECK(parseExerciseSize("1").value() == 2 * MiB);
    CHECK(parseExerciseSize("3m").value() == 4 * MiB);
    CHECK(parseExerciseSize("2097152").value() == 2 * MiB);
    CHECK(parseExerciseSize("1G").value() == 1024 * MiB);
    CHECK(parseExerciseSize("4096K").value() == 4 * MiB);
    for (const char *bad : {"", "0", "M", "-1M", "12Q", "1.5M", "99999999999G"}) {
        INFO(bad);
        auto r = parseExerciseSize(bad);
        REQUIRE_FALSE(r);
        CHECK_THAT(r.error().describe(), Catch::Contains("size"));
    }
}
