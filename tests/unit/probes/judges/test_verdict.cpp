#include <catch2/catch.hpp>

#include "probes/judges/media_errors.h"
#include "probes/judges/verdict.h"
#include "tests/unit/probes/judges/judge_mount.h"

using namespace daxprobe;
using daxprobe::test::judgeMount;

namespace
{

NdNamespace fsdaxNs()
{
    NdNamespace ns;
    ns.dev = "namespace0.0";
    ns.region = "region0";
    ns.mode = "fsdax";
    ns.map = "dev";
    ns.size = 526385152;
    ns.align = 2 << 20;
    ns.blockdev = "pmem0";
    return ns;
}

NdNamespace rawNs()
{
    NdNamespace ns;
    ns.dev = "namespace0.0";
    ns.mode = "raw";
    ns.size = 536870912;
    ns.blockdev = "pmem0";
    return ns;
}

MountEntry mountOf(const std::string &fstype, const std::string &superOptions)
{
    MountEntry m;
    m.mountId = 30;
    m.major = 259;
    m.minor = 0;
    m.mountPoint = "/mnt/pmem";
    m.source = "/dev/pmem0";
    m.fstype = fstype;
    m.mountOptions = "rw,relatime";
    m.superOptions = superOptions;
    return m;
}

BlockDevFacts pmem0(bool dax)
{
    return {"pmem0", 259, 0, dax};
}

MountLiveFacts liveFacts(bool statxDax, bool mapSyncOk)
{
    MountLiveFacts live;
    live.statx.observe();
    live.statx.file = "/mnt/pmem/(O_TMPFILE)";
    live.statx.dax = statxDax;
    live.mapSync.observe(mapSyncOk ? "" : "mmap MAP_SYNC: Operation not supported");
    live.mapSync.mapped = mapSyncOk;
    return live;
}

Facts factsWith(NdNamespace ns, MountEntry m, BlockDevFacts b, std::optional<MountLiveFacts> live)
{
    Facts f;
    f.nfit.present = true;
    f.topology.observe();
    f.topology.regions.push_back(
        {"region0", "ndbus0", "pmem", 536870912, 16777216, 0, "memory_controller", 0, 0});
    f.topology.namespaces.push_back(std::move(ns));
    f.blockdevs.push_back(b);
    if (live)
        f.mountLive[m.mountPoint] = *live;
    f.mounts.push_back(std::move(m));
    return f;
}

} // namespace

TEST_CASE("namespaces: fsdax and devdax can do DAX, raw and sector cannot", "[verdict]")
{
    Verdict fs = judgeNamespace(fsdaxNs());
    CHECK(fs.code == code::DaxCapable);
    CHECK(fs.severity == Severity::Ok);
    CHECK(fs.remedy.empty());

    NdNamespace dev = fsdaxNs();
    dev.mode = "devdax";
    dev.blockdev.clear();
    dev.chardev = "dax0.0";
    Verdict dv = judgeNamespace(dev);
    CHECK(dv.code == code::DaxCapable);
    CHECK_THAT(dv.summary, Catch::Contains("/dev/dax0.0"));

    for (const char *mode : {"raw", "sector"}) {
        NdNamespace ns = rawNs();
        ns.mode = mode;
        Verdict v = judgeNamespace(ns);
        CHECK(v.code == code::DeviceCannotDax);
        CHECK(v.severity == Severity::Problem);
        CHECK_THAT(v.remedy,
                   Catch::StartsWith("ndctl create-namespace -f -e namespace0.0 -m fsdax"));
    }
}

TEST_CASE("namespaces: small align and bad blocks are warnings", "[verdict]")
{
    NdNamespace ns = fsdaxNs();
    ns.align = 4096;
    Verdict v = judgeNamespace(ns);
    CHECK(v.code == code::DaxCapable);
    CHECK(v.severity == Severity::Warning);
    REQUIRE(v.warnings.size() == 1);
    CHECK_THAT(v.warnings[0], Catch::Contains("PMD"));

    ns = fsdaxNs();
    ns.badblockCount = 8;
    v = judgeNamespace(ns);
    CHECK(v.severity == Severity::Ok);
    judgeMediaErrors(ns, {}, v); // evaluate() adds them (test_media_errors.cpp)
    CHECK(v.severity == Severity::Warning);
    CHECK_THAT(v.warnings[0], Catch::Contains("8 bad blocks"));
}

TEST_CASE("mounts: statx DAX proves DAX is active", "[verdict]")
{
    NdNamespace ns = fsdaxNs();
    MountEntry m = mountOf("ext4", "rw,dax=always");
    BlockDevFacts b = pmem0(true);
    MountLiveFacts live = liveFacts(true, true);
    Verdict v = judgeMount(m, &b, &ns, &live, {});
    CHECK(v.code == code::DaxActive);
    CHECK(v.severity == Severity::Ok);
    CHECK(v.remedy.empty());

    // MAP_SYNC refused on DAX files is odd enough to warn about.
    MountLiveFacts refused = liveFacts(true, false);
    v = judgeMount(m, &b, &ns, &refused, {});
    CHECK(v.code == code::DaxActive);
    CHECK(v.severity == Severity::Warning);
}

TEST_CASE("mounts: XFS on a raw namespace turns DAX off silently", "[verdict]")
{
    NdNamespace ns = rawNs();
    // What the kernel shows after the fallback: dax=never in mountinfo.
    MountEntry m = mountOf("xfs", "rw,attr2,inode64,dax=never");
    BlockDevFacts b = pmem0(false);
    MountLiveFacts live = liveFacts(false, false);
    std::vector<std::string> kmsg = {
        "XFS (pmem0): DAX unsupported by block device. Turning off DAX."};
    Verdict v = judgeMount(m, &b, &ns, &live, kmsg);
    CHECK(v.code == code::DaxSilentlyOff);
    CHECK(v.severity == Severity::Problem);
    CHECK_THAT(v.remedy, Catch::Contains("ndctl create-namespace -f -e namespace0.0 -m fsdax"));
    CHECK_THAT(v.remedy, Catch::Contains("mkfs.xfs -f /dev/pmem0"));
    bool kmsgEvidence = false;
    for (const auto &e : v.evidence)
        kmsgEvidence |= e.check == "kmsg" && e.result.find("Turning off DAX") != std::string::npos;
    CHECK(kmsgEvidence);

    // Without the kernel's line, the same mount reads as "not requested" on a
    // device that cannot: still a problem, still the ndctl remedy.
    v = judgeMount(m, &b, &ns, &live, {});
    CHECK(v.code == code::DeviceCannotDax);
    CHECK_THAT(v.remedy, Catch::Contains("ndctl create-namespace"));
}

TEST_CASE("mounts: dax=always shown but files not DAX is silently off", "[verdict]")
{
    NdNamespace ns = fsdaxNs();
    MountEntry m = mountOf("ext4", "rw,dax=always");
    BlockDevFacts b = pmem0(true);
    MountLiveFacts live = liveFacts(false, false);
    Verdict v = judgeMount(m, &b, &ns, &live, {});
    CHECK(v.code == code::DaxSilentlyOff);
    CHECK_THAT(v.remedy, Catch::Contains("mount -o dax=always /dev/pmem0 /mnt/pmem"));
}

TEST_CASE("mounts: virtiofs with dax is judged by statx; no VMM option is invented", "[verdict]")
{
    MountEntry m = mountOf("virtiofs", "rw,dax=always");
    m.major = 0;
    m.minor = 40;
    m.source = "kataShared";
    MountLiveFacts daxFiles = liveFacts(true, false); // MAP_SYNC never works on virtiofs
    Verdict v = judgeMount(m, nullptr, nullptr, &daxFiles, {});
    CHECK(v.code == code::DaxActive);
    CHECK(v.severity == Severity::Ok);

    MountLiveFacts noDax = liveFacts(false, false);
    v = judgeMount(m, nullptr, nullptr, &noDax, {});
    CHECK(v.code == code::DaxSilentlyOff);
    CHECK_THAT(v.warnings.at(0), Catch::Contains("upstream QEMU (7.2 included)"));
    CHECK_THAT(v.remedy, !Catch::Contains("cache-size"));
}

TEST_CASE("mounts: virtiofs without DAX files is where the page cache holds the data", "[verdict]")
{
    MountLiveFacts noDax = liveFacts(false, false);
    for (const char *opts : {"rw", "rw,dax=inode"}) {
        MountEntry m = mountOf("virtiofs", opts);
        m.major = 0;
        m.minor = 40;
        m.source = "share";
        Verdict v = judgeMount(m, nullptr, nullptr, &noDax, {});
        CHECK(v.code == code::VirtiofsPageCache);
        CHECK(v.severity == Severity::Warning);
        CHECK_THAT(v.summary, Catch::Contains("its own page cache"));
        CHECK_THAT(v.summary, Catch::Contains("files are not DAX"));
        // The kernel refuses dax=always without a window: never the remedy.
        CHECK_THAT(v.remedy, !Catch::Contains("dax=always"));
        CHECK_THAT(v.remedy, Catch::Contains("virtio-pmem"));
    }
}

TEST_CASE("mounts: fsdax without the option is not requested", "[verdict]")
{
    NdNamespace ns = fsdaxNs();
    MountEntry m = mountOf("ext4", "rw");
    BlockDevFacts b = pmem0(true);
    MountLiveFacts live = liveFacts(false, false);
    Verdict v = judgeMount(m, &b, &ns, &live, {});
    CHECK(v.code == code::DaxNotRequested);
    CHECK(v.severity == Severity::Problem);
    CHECK_THAT(v.remedy, Catch::Contains("dax=always"));

    // XFS shows no option for dax=inode: same verdict, files decide.
    MountEntry inode = mountOf("xfs", "rw,dax=inode");
    v = judgeMount(inode, &b, &ns, &live, {});
    CHECK(v.code == code::DaxNotRequested);
    CHECK(v.severity == Severity::Warning);
}

TEST_CASE("mounts: without a file to examine, the option and device decide", "[verdict]")
{
    NdNamespace ns = fsdaxNs();
    MountEntry m = mountOf("ext4", "ro,dax=always");
    BlockDevFacts b = pmem0(true);
    MountLiveFacts live;
    live.statx.skip("no regular file found to examine");
    live.mapSync.skip("read-only mount");
    Verdict v = judgeMount(m, &b, &ns, &live, {});
    CHECK(v.code == code::DaxActive);
    CHECK(v.severity == Severity::Warning); // unconfirmed
}

TEST_CASE("overall verdicts and exit codes", "[verdict]")
{
    SECTION("no NFIT and no region")
    {
        Facts f;
        f.nfit.present = false;
        f.nfit.readError = "open sys/firmware/acpi/tables/NFIT: No such file or directory";
        Report r = evaluate(f);
        CHECK(r.overall.code == code::NoNfit);
        CHECK(r.exitCode == 1);
        CHECK_FALSE(r.overall.remedy.empty());
    }
    SECTION("NFIT but no namespace")
    {
        Facts f;
        f.nfit.present = true;
        Report r = evaluate(f);
        CHECK(r.overall.code == code::NoPmemNamespace);
        CHECK(r.exitCode == 1);
    }
    SECTION("mount table unreadable is a failed check")
    {
        Facts f;
        f.mountsError = "open proc/self/mountinfo: Permission denied";
        CHECK(evaluate(f).exitCode == 2);
    }
    SECTION("DAX active everywhere")
    {
        Facts f = factsWith(fsdaxNs(), mountOf("ext4", "rw,dax=always"), pmem0(true),
                            liveFacts(true, true));
        Report r = evaluate(f);
        REQUIRE(r.mounts.size() == 1);
        CHECK(r.mounts[0].verdict.code == code::DaxActive);
        CHECK(r.mounts[0].ns == &f.topology.namespaces[0]);
        CHECK(r.overall.code == code::DaxVerified);
        CHECK(r.exitCode == 0);
    }
    SECTION("silent fallback, with the kernel line matched to the device")
    {
        Facts f = factsWith(rawNs(), mountOf("xfs", "rw,dax=never"), pmem0(false),
                            liveFacts(false, false));
        KmsgRecord rec;
        rec.message = "XFS (pmem0): DAX unsupported by block device. Turning off DAX.";
        rec.device = "pmem0";
        f.kmsg.records.push_back(rec);
        rec.message = "XFS (pmem1): DAX unsupported by block device. Turning off DAX.";
        rec.device = "pmem1";
        f.kmsg.records.push_back(rec);
        Report r = evaluate(f);
        REQUIRE(r.mounts.size() == 1);
        CHECK(r.mounts[0].kmsg.size() == 1);
        CHECK(r.mounts[0].verdict.code == code::DaxSilentlyOff);
        CHECK(r.overall.code == code::ProblemsFound);
        CHECK(r.exitCode == 1);
    }
    SECTION("a mount on another disk is not examined")
    {
        Facts f = factsWith(fsdaxNs(), mountOf("ext4", "rw"), pmem0(true), std::nullopt);
        f.mounts[0].major = 254;
        f.mounts[0].source = "/dev/vda1";
        Report r = evaluate(f);
        CHECK(r.mounts.empty());
        CHECK(r.overall.code == code::DaxVerified);
    }
}

TEST_CASE("mounts: DAX on a namespace aligned below 2 MiB warns about PMD mappings", "[verdict]")
{
    NdNamespace ns = fsdaxNs();
    MountEntry m = mountOf("xfs", "rw,dax=always");
    BlockDevFacts b = pmem0(true);
    MountLiveFacts live = liveFacts(true, true);
    CHECK(judgeMount(m, &b, &ns, &live, {}).warnings.empty()); // 2 MiB: nothing to say
    ns.align = 4096;
    Verdict v = judgeMount(m, &b, &ns, &live, {});
    CHECK(v.code == code::DaxActive);
    REQUIRE(v.warnings.size() == 1);
    CHECK_THAT(v.warnings[0], Catch::Contains("align is 4 KiB") && Catch::Contains("PMD"));
}
