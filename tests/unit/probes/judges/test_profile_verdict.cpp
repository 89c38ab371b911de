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
    CHECK(fb.cause.empty()); // no extents read: no cause claimed
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

// Issue 36: a fallback's cause, from the file's extents and its device.
// The QEMU counts are fsdax-ext4's (tests/fixtures/fsdax-ext4/_vm/profile.json);
// the extents are made up in the shape of each case (no guest's fiemap stored yet).
TEST_CASE("fallbacks are blamed on the layout or on the device", "[verdict][profile]")
{
    constexpr std::uint64_t MiB = 1 << 20;
    // QEMU NVDIMM, ext4, a dd-written 32 MiB file off the 2 MiB grid.
    FaultProfile qemu = daxProfile(16, 16, 16384);
    qemu.fstype = "ext4";
    qemu.layout = pmdLayoutOf({{0, 1 * MiB, 32 * MiB, true}}, 32 * MiB);
    qemu.device = {"pmem0", "ACPI.NFIT", "namespace0.0", "fsdax", 2 * MiB};
    MappingOutcome layout = judgeMapping(qemu);
    CHECK(layout.cause == "layout");
    CHECK_THAT(layout.summary, Catch::Contains("16 of the file's 16 2 MiB pieces are not"));
    CHECK_THAT(layout.advice, Catch::Contains("fallocate"));
    // 6.12 and 7.2 fault each piece twice: twice as many fallbacks, still the layout.
    FaultProfile twice = qemu;
    twice.counts = daxProfile(32, 32, 16384).counts;
    CHECK(judgeMapping(twice).cause == "layout");
    // Some pieces ready, some not: the layout is a cause, and its advice stands.
    FaultProfile mixed = qemu;
    mixed.layout =
        pmdLayoutOf({{0, 0, 16 * MiB, true}, {16 * MiB, 17 * MiB, 16 * MiB, true}}, 32 * MiB);
    CHECK(judgeMapping(mixed).cause == "layout");

    // nfit_test, ext4 on 2 MiB stripes, an 8 MiB file allocated whole.
    FaultProfile nfit = daxProfile(4, 4, 2048);
    nfit.fstype = "ext4";
    nfit.layout = pmdLayoutOf({{0, 4 * MiB, 8 * MiB, true}}, 8 * MiB);
    nfit.device = {"pmem0", "nfit_test.0", "namespace0.0", "fsdax", 4096};
    MappingOutcome device = judgeMapping(nfit);
    CHECK(device.cause == "device");
    CHECK(device.advice.empty());
    CHECK_THAT(device.summary, Catch::Contains("4 of the file's 4 2 MiB pieces lie on"));
    CHECK_THAT(device.summary, Catch::Contains("one page at a time"));

    // Another device that fell back on ready pieces: the device, no nfit_test note.
    nfit.device.provider = "ACPI.NFIT";
    MappingOutcome other = judgeMapping(nfit);
    CHECK(other.cause == "device");
    CHECK_THAT(other.summary, !Catch::Contains("nfit_test"));
}

// Kata's image (issue 44; tests/fixtures/kata-*/_vm): the partition 1 MiB
// into a data area on a 2 MiB boundary, 16 of 16 2 MiB faults fell back on
// 6.1; with the partition at 2 MiB, 16 mapped whole and 2 4 KiB faults.
TEST_CASE("a filesystem off the 2 MiB grid is the cause, not the file", "[verdict][profile]")
{
    FaultProfile off = daxProfile(16, 16, 8192);
    off.fstype = "ext4";
    off.layout = {true, 16, 0};
    off.device.blockdev = "pmem0p1";
    off.device.memoryOffset = 1 << 20;
    MappingOutcome m = judgeMapping(off);
    CHECK(m.code == "fallback");
    CHECK(m.cause == "layout");
    CHECK_THAT(m.summary, Catch::Contains("pmem0p1 starts 1024 KiB off a 2 MiB boundary"));
    CHECK_THAT(m.advice, Catch::Contains("partition on a 2 MiB boundary"));
    CHECK_THAT(m.advice, !Catch::Contains("fallocate"));

    MappingOutcome whole = judgeMapping(daxProfile(16, 0, 2));
    CHECK(whole.code == "pmd");
    CHECK(whole.advice.empty());
    CHECK_THAT(whole.summary, Catch::Contains("none fell back"));
}
