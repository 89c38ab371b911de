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

// Issue 34: the 2 MiB advice names what the file's own filesystem can do.
TEST_CASE("2 MiB advice names only the file's own filesystem", "[verdict][profile]")
{
    auto adviceFor = [](const char *fstype) {
        FaultProfile p = daxProfile(8, 8, 2048);
        p.fstype = fstype;
        return judgeMapping(p).advice;
    };
    std::string erofs = adviceFor("erofs");
    CHECK_THAT(erofs, Catch::Contains("EROFS") && Catch::Contains("has no option to align"));
    CHECK_THAT(erofs, !Catch::Contains("mkfs.xfs") && !Catch::Contains("mkfs.ext4"));
    std::string xfs = adviceFor("xfs");
    CHECK_THAT(xfs, Catch::Contains("mkfs.xfs -d su=2m,sw=1") && !Catch::Contains("mkfs.ext4"));
    std::string ext4 = adviceFor("ext4");
    CHECK_THAT(ext4, Catch::Contains("mkfs.ext4 -E stride=512") && !Catch::Contains("mkfs.xfs"));
    CHECK_THAT(adviceFor(""), Catch::Contains("fallocate") && !Catch::Contains("mkfs"));
}
