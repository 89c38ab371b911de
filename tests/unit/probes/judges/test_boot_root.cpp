// A guest booted from its pmem image, as Kata Containers boots one (issue 44;
// ../shared/real-clients.md): the kernel mounts pmem0p1 as "/dev/root",
// read-only, on a read-only region of a DIMM QEMU marks not armed (a
// readonly=on backend needs unarmed=on), its partition 1 MiB into a data
// area that starts on a 2 MiB boundary.
#include <catch2/catch.hpp>

#include "probes/judges/verdict.h"

using namespace daxprobe;

namespace
{

constexpr std::uint64_t kMiB = 1 << 20;

Facts kataGuest(bool dax, std::uint64_t partitionStart = kMiB)
{
    Facts f;
    f.nfit.present = true;
    f.kernelCmdline = fmt::format("root=/dev/pmem0p1 rootflags={}data=ordered,errors=remount-ro "
                                  "ro rootfstype=ext4",
                                  dax ? "dax," : "");
    f.topology.observe();
    f.topology.regions.push_back(
        {"region0", "ndbus0", "pmem", 134217728, 16777216, 0, "memory_controller", 0, 0});
    NdDimm dimm;
    dimm.dev = "nmem0";
    dimm.bus = "ndbus0";
    dimm.flags = {"not_armed"};
    dimm.regions = {{"region0", true}};
    f.topology.dimms.push_back(dimm);
    NdNamespace ns;
    ns.dev = "namespace0.0";
    ns.region = "region0";
    ns.mode = "fsdax";
    ns.map = "mem";
    ns.size = 132120576;
    ns.align = 2 * kMiB;
    ns.blockdev = "pmem0";
    ns.dataStart = 0x140000000 + 2 * kMiB; // after Kata's 2 MiB DAX header
    f.topology.namespaces.push_back(ns);
    f.blockdevs.push_back({"pmem0p1", 259, 1, true, "pmem0", partitionStart});
    f.blockdevs.push_back({"pmem0", 259, 0, true});
    MountEntry m;
    m.mountId = 24;
    m.parentId = 1;
    m.major = 259;
    m.minor = 1;
    m.root = "/";
    m.mountPoint = "/";
    m.mountOptions = "ro,relatime";
    m.fstype = "ext4";
    m.source = "/dev/root";
    m.superOptions =
        dax ? "ro,errors=remount-ro,data=ordered,dax=always" : "ro,errors=remount-ro,data=ordered";
    f.mounts.push_back(m);
    MountLiveFacts live;
    live.statx.observe();
    live.statx.file = "/bin/busybox";
    live.statx.dax = dax;
    live.mapSync.skip("read-only mount");
    f.mountLive["/"] = live;
    return f;
}

const MountReport &rootMount(const Report &r)
{
    REQUIRE(r.mounts.size() == 1);
    return r.mounts[0];
}

} // namespace

TEST_CASE("boot root: /dev/root is judged as the partition its number names", "[verdict][boot]")
{
    Facts f = kataGuest(true);
    Report r = evaluate(f);
    const MountReport &mr = rootMount(r);
    REQUIRE(mr.blockdev);
    CHECK(mr.blockdev->name == "pmem0p1");
    REQUIRE(mr.ns);
    CHECK(mr.ns->dev == "namespace0.0");
    CHECK(mr.verdict.code == code::DaxActive);
    // The namespace says what is mounted on it, not "mount /dev/pmem0".
    REQUIRE(r.namespaces.size() == 1);
    CHECK(r.namespaces[0].verdict.summary.find("mount /dev/pmem0 with") == std::string::npos);
    CHECK(r.namespaces[0].verdict.summary.find("/ (pmem0p1)") != std::string::npos);
}

TEST_CASE("boot root: a read-only image on an unarmed DIMM is by design", "[verdict][boot]")
{
    Report r = evaluate(kataGuest(true));
    REQUIRE(r.dimms.size() == 1);
    CHECK(r.dimms[0].verdict.code == code::DimmReadOnly);
    CHECK(r.dimms[0].verdict.severity == Severity::Ok);
    CHECK(r.dimms[0].verdict.remedy.empty());
    CHECK(r.overall.code == code::DaxVerified);
    CHECK(r.exitCode == 0);

    // Mounted read-write on a region made writable by hand: a problem again.
    Facts rw = kataGuest(true);
    rw.mounts[0].mountOptions = "rw,relatime";
    rw.mounts[0].superOptions = "rw,errors=remount-ro,data=ordered,dax=always";
    Report w = evaluate(rw);
    CHECK(w.dimms[0].verdict.code == code::DimmNotPersistent);
    CHECK(w.dimms[0].verdict.severity == Severity::Problem);
    CHECK(w.exitCode == 1);
}

TEST_CASE("boot root without dax: not requested, and the remedy is the boot's", "[verdict][boot]")
{
    Report r = evaluate(kataGuest(false));
    const MountReport &mr = rootMount(r);
    CHECK(mr.verdict.code == code::DaxNotRequested);
    CHECK(mr.verdict.severity == Severity::Problem);
    CHECK(mr.verdict.remedy.find("umount") == std::string::npos);
    CHECK(mr.verdict.remedy.find("rootflags=dax,data=ordered,errors=remount-ro") !=
          std::string::npos);
    CHECK(r.overall.code == code::ProblemsFound);
    CHECK(r.overall.summary.find("nothing is mounted") == std::string::npos);
    CHECK(r.exitCode == 1);
    // Not withheld for the read-only region: it reconfigures nothing.
    CHECK(mr.verdict.warnings.empty());
}

TEST_CASE("boot root: a partition 1 MiB off a 2 MiB boundary rules out PMD mappings",
          "[verdict][boot]")
{
    Report r = evaluate(kataGuest(true));
    const MountReport &mr = rootMount(r);
    REQUIRE(mr.pmdOffset);
    CHECK(*mr.pmdOffset == kMiB);
    CHECK(mr.verdict.code == code::DaxActive);
    REQUIRE(mr.verdict.warnings.size() == 1);
    CHECK(mr.verdict.warnings[0].find("pmem0p1 starts 1024 KiB into pmem0") != std::string::npos);
    CHECK(r.exitCode == 0);

    Report aligned = evaluate(kataGuest(true, 2 * kMiB));
    CHECK(*rootMount(aligned).pmdOffset == 0);
    CHECK(rootMount(aligned).verdict.warnings.empty());
}

TEST_CASE("boot root: a raw namespace under / is rebuilt from outside", "[verdict][boot]")
{
    Facts f = kataGuest(false); // ext4 refuses -o dax on a raw device: mounted without
    f.topology.namespaces[0].mode = "raw";
    f.topology.namespaces[0].map.clear();
    f.topology.dimms.clear(); // a writable NVDIMM, as libguestfs attaches one
    f.blockdevs[0].queueDax = false;
    f.blockdevs[1].queueDax = false;
    f.mountLive["/"].statx.dax = false;
    Report r = evaluate(f);
    const MountReport &mr = rootMount(r);
    CHECK(mr.verdict.code == code::DeviceCannotDax);
    CHECK(mr.verdict.remedy.find("umount") == std::string::npos);
    CHECK(mr.verdict.remedy.find("ndctl write-infoblock") != std::string::npos);
    CHECK(mr.verdict.remedy.find("/dev/root") == std::string::npos);
    // The namespace that holds / gets no create-namespace from inside.
    CHECK(r.namespaces[0].verdict.remedy.empty());
}
