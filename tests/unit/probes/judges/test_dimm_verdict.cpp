// The verdicts a DIMM's state calls for (issue 36), on the tree captured on
// the kernel's NVDIMM test bus (tests/fixtures/nfit-test-nfit).
#include <catch2/catch.hpp>

#include "probes/judges/dimm_verdict.h"
#include "probes/readers/sysfs_topology.h"

using namespace daxprobe;

namespace
{

Topology nfitTestBus()
{
    auto root = Root::open(std::string(FIXTURES_DIR) + "/nfit-test-nfit");
    REQUIRE(root);
    return readTopologyFromSysfs(*root);
}

} // namespace

TEST_CASE("dimms: a DIMM that cannot persist, with and without DAX on it", "[dimm]")
{
    Topology t = nfitTestBus();
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
    auto withDax = judgeDimms(t, {{"region2", "/mnt/pmem"}});
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
    Topology t = nfitTestBus();
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
