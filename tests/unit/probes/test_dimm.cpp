// DIMMs (issue 36) on the tree captured on the kernel's NVDIMM test bus
// (tests/fixtures/nfit-test-nfit: nfit_test's two buses and six DIMMs, one
// DIMM not armed with save, restore and flush failed, one map failed), and
// the verdicts their states call for.
#include <catch2/catch.hpp>

#include "probes/dimm_verdict.h"
#include "probes/sysfs_topology.h"

using namespace daxprobe;

namespace
{

Topology captured()
{
    auto root = Root::open(std::string(FIXTURES_DIR) + "/nfit-test-nfit");
    REQUIRE(root);
    return readTopologyFromSysfs(*root);
}

const NdDimm &dimm(const Topology &t, const std::string &dev)
{
    for (const auto &d : t.dimms)
        if (d.dev == dev)
            return d;
    FAIL("no " << dev);
    throw;
}

MountReport daxMountOn(const NdNamespace &ns, const MountEntry &m)
{
    MountReport mr;
    mr.mount = &m;
    mr.ns = &ns;
    mr.verdict.code = code::DaxActive;
    return mr;
}

} // namespace

TEST_CASE("dimms: the test bus's nmem devices as sysfs describes them", "[dimm]")
{
    Topology t = captured();
    REQUIRE(t.dimms.size() == 6);
    const NdDimm &failed = dimm(t, "nmem4");
    CHECK(failed.bus == "ndbus1");
    CHECK(failed.handle == 65536u);
    CHECK(failed.id == "cdab-0a-07e0-fffffeff");
    CHECK(failed.flags == std::vector<std::string>{"save_fail", "restore_fail", "flush_fail",
                                                   "not_armed", "smart_event"});
    REQUIRE(failed.regions.size() == 1);
    CHECK(failed.regions[0].region == "region2");
    CHECK(failed.regions[0].readOnly);
    CHECK(dimm(t, "nmem5").flags == std::vector<std::string>{"map_fail"});
    const NdDimm &healthy = dimm(t, "nmem0");
    CHECK(healthy.dirtyShutdown == 42u);
    CHECK(healthy.flags == std::vector<std::string>{"smart_notify"});
    REQUIRE(healthy.regions.size() == 2); // region0 (two DIMMs) and region1 (four)
    CHECK_FALSE(healthy.regions[0].readOnly);
}

TEST_CASE("dimms: a DIMM that cannot persist, with and without DAX on it", "[dimm]")
{
    Topology t = captured();
    auto reports = judgeDimms(t, {});
    auto of = [&](const std::string &dev) {
        for (const auto &r : reports)
            if (r.dimm->dev == dev)
                return r;
        FAIL("no report for " << dev);
        throw;
    };
    DimmReport failed = of("nmem4");
    CHECK(failed.verdict.code == code::DimmNotPersistent);
    CHECK(failed.verdict.severity == Severity::Warning); // nothing mounted on it
    CHECK(failed.consequences.size() == 2);
    CHECK(failed.consequences[0].find("region2 is read-only") == 0);
    CHECK(of("nmem5").verdict.code == code::DimmMapFailed);
    // smart_notify says the DIMM can notify, not that it did.
    CHECK(of("nmem0").verdict.code == code::DimmOk);
    CHECK(of("nmem0").verdict.severity == Severity::Ok);

    // The same DIMM under a mounted DAX filesystem: a problem, its cause named.
    NdNamespace ns;
    ns.dev = "namespace2.0";
    ns.region = "region2";
    MountEntry m;
    m.mountPoint = "/mnt/pmem";
    auto withDax = judgeDimms(t, {daxMountOn(ns, m)});
    for (const auto &r : withDax)
        if (r.dimm->dev == "nmem4") {
            CHECK(r.verdict.severity == Severity::Problem);
            CHECK(r.daxMounts == std::vector<std::string>{"/mnt/pmem"});
            CHECK(r.verdict.summary.find("not_armed") != std::string::npos);
            CHECK(r.verdict.remedy.find("Reconfiguring its namespaces does not help") !=
                  std::string::npos);
        }
}

TEST_CASE("dimms: no reconfiguration on a region a DIMM made read-only", "[dimm]")
{
    Topology t = captured();
    NdNamespace onReadOnly;
    onReadOnly.dev = "namespace2.0";
    onReadOnly.region = "region2";
    Verdict v;
    v.remedy = "ndctl create-namespace -f -e namespace2.0 -m fsdax";
    withholdReconfiguration(t, &onReadOnly, v);
    CHECK(v.remedy.empty());
    REQUIRE(v.warnings.size() == 1);
    CHECK(v.warnings[0].find("because of nmem4") != std::string::npos);

    NdNamespace writable = onReadOnly;
    writable.region = "region0";
    Verdict w;
    w.remedy = "ndctl create-namespace -f -e namespace0.1 -m fsdax";
    withholdReconfiguration(t, &writable, w);
    CHECK(w.remedy == "ndctl create-namespace -f -e namespace0.1 -m fsdax");
}
