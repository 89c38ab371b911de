// virtio-pmem (issue 8 part 3): recognised from the bus provider; MAP_SYNC's
// refusal is expected there and the report says what applications must do.
#include <catch2/catch.hpp>

#include "probes/judges/verdict.h"
#include "probes/judges/virtio_pmem.h"

using namespace daxprobe;

namespace
{

Facts virtioFacts(bool withNvdimm)
{
    Facts f;
    f.nfit.present = withNvdimm;
    f.topology.observe();
    f.topology.buses.push_back({"ndbus0", "virtio-pmem", ""});
    f.topology.regions.push_back({"region0", "ndbus0", "pmem", 536870912, 0, 0, "unknown", 0, 0});
    NdNamespace ns;
    ns.dev = "namespace0.0";
    ns.region = "region0";
    ns.mode = "fsdax";
    ns.size = 526385152;
    ns.align = 2 << 20;
    ns.blockdev = "pmem0";
    f.topology.namespaces.push_back(ns);
    if (withNvdimm) {
        f.topology.buses.push_back({"ndbus1", "ACPI.NFIT", ""});
        f.topology.regions.push_back(
            {"region1", "ndbus1", "pmem", 536870912, 0, 0, "memory_controller", 0, 0});
    }
    f.blockdevs.push_back({"pmem0", 259, 0, true});
    MountEntry m;
    m.mountId = 30;
    m.major = 259;
    m.mountPoint = "/mnt/pmem";
    m.source = "/dev/pmem0";
    m.fstype = "ext4";
    m.superOptions = "rw,dax=always";
    f.mounts.push_back(m);
    MountLiveFacts live;
    live.statx.observe();
    live.statx.file = "/mnt/pmem/(O_TMPFILE)";
    live.statx.dax = true;
    live.mapSync.observe("mmap MAP_SYNC: Operation not supported");
    live.mapSync.mapped = false;
    f.mountLive["/mnt/pmem"] = live;
    return f;
}

} // namespace

TEST_CASE("virtio-pmem is recognised by its bus provider", "[verdict][virtio-pmem]")
{
    Facts f = virtioFacts(true);
    CHECK(isVirtioPmem(f.topology, f.topology.regions[0]));
    CHECK_FALSE(isVirtioPmem(f.topology, f.topology.regions[1]));
    // The report decides it once per region; the mount takes its region's.
    Report r = evaluate(f);
    REQUIRE(r.regions.size() == 2);
    CHECK(r.regions[0].virtioPmem);
    CHECK_FALSE(r.regions[1].virtioPmem);
    CHECK(r.virtioPmem);
    REQUIRE(r.mounts.size() == 1);
    CHECK(r.mounts[0].virtioPmem);
}

TEST_CASE("virtio-pmem alone: no NFIT by design, MAP_SYNC refusal expected",
          "[verdict][virtio-pmem]")
{
    Facts f = virtioFacts(false);
    Report r = evaluate(f);
    CHECK(r.overall.code == code::DaxVerified);
    CHECK(r.exitCode == 0);
    REQUIRE(r.mounts.size() == 1);
    const Verdict &v = r.mounts[0].verdict;
    CHECK(v.code == code::DaxActive);
    CHECK(v.severity == Severity::Warning);
    REQUIRE(v.warnings.size() == 1);
    CHECK_THAT(v.warnings[0], Catch::Contains("by design") && Catch::Contains("fsync/msync") &&
                                  Catch::Contains("pmem_is_pmem is false"));
    CHECK_THAT(v.warnings[0], !Catch::Contains("although"));
    REQUIRE(r.warnings.size() == 1);
    CHECK_THAT(r.warnings[0], Catch::Contains("no ACPI NFIT, by design"));
}

TEST_CASE("virtio-pmem beside an NVDIMM: only its region is virtio-pmem", "[verdict][virtio-pmem]")
{
    Facts f = virtioFacts(true);
    Report r = evaluate(f);
    REQUIRE(r.warnings.size() == 1);
    CHECK_THAT(r.warnings[0], Catch::StartsWith("region0 is virtio-pmem"));

    // The same refusal on an NVDIMM namespace stays a surprise worth saying so.
    f.topology.namespaces[0].region = "region1";
    r = evaluate(f);
    CHECK_THAT(r.mounts[0].verdict.warnings[0], Catch::Contains("although files are DAX"));
}
