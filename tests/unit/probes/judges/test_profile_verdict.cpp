#include <catch2/catch.hpp>

#include "probes/judges/profile_verdict.h"

using namespace daxprobe;

namespace
{

FaultProfile daxProfile(std::uint64_t pmd, std::uint64_t fallback, std::uint64_t pte)
{
    FaultProfile p;
    p.dax = true;
    p.pagesTouched = 16384;
    p.counts.minorFaults = pmd + pte;
    p.counts.majorFaults = 0;
    p.counts.pmdFaults = pmd;
    p.counts.pmdFallbacks = fallback;
    p.counts.pteFaults = pte;
    return p;
}

} // namespace

// The rows of vm-testbed.md's fault table, as the tracepoints count them.
TEST_CASE("PMD use is judged from tracepoint counts", "[verdict][profile]")
{
    CHECK(judgeMapping(daxProfile(32, 0, 0)).code == "pmd");  // 64 MiB, 2 MiB aligned
    MappingOutcome fb = judgeMapping(daxProfile(8, 8, 2048)); // misaligned
    CHECK(fb.code == "fallback");
    CHECK_THAT(fb.summary, Catch::Contains("8 of 8"));
    CHECK_THAT(fb.advice, Catch::Contains("fallocate"));
    CHECK(judgeMapping(daxProfile(0, 0, 512)).code == "pte");
    CHECK(judgeMapping(daxProfile(0, 0, 0)).code == "unknown");
}

TEST_CASE("without tracepoints or DAX the outcome says so", "[verdict][profile]")
{
    FaultProfile p = daxProfile(1, 0, 0);
    p.counts.pmdFaults.reset();
    p.counts.tracepointError = "no fs_dax tracepoints (tracefs not mounted, or not root)";
    MappingOutcome m = judgeMapping(p);
    CHECK(m.code == "unknown");
    CHECK_THAT(m.summary, Catch::Contains("tracefs not mounted"));

    FaultProfile pc;
    pc.dax = false;
    pc.pagesTouched = 8192;
    pc.counts.minorFaults = 15872;
    pc.counts.majorFaults = 513;
    MappingOutcome cache = judgeMapping(pc);
    CHECK(cache.code == "page_cache");
    CHECK_THAT(cache.summary, Catch::Contains("16385 faults"));
}
