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
    v.remedyReconfigures = true;
    withholdReconfiguration(t, &onReadOnly, v);
    CHECK(v.remedy.empty());
    REQUIRE(v.warnings.size() == 1);
    CHECK(v.warnings[0].find("because of nmem4") != std::string::npos);

    NdNamespace writable = onReadOnly;
    writable.region = "region0";
    Verdict w;
    w.remedy = "ndctl create-namespace -f -e namespace0.1 -m fsdax";
    w.remedyReconfigures = true;
    withholdReconfiguration(t, &writable, w);
    CHECK(w.remedy == "ndctl create-namespace -f -e namespace0.1 -m fsdax");

    // A remedy that reconfigures nothing (the boot's rootflags) stays.
    Verdict boot;
    boot.remedy = "reboot with rootflags=dax on the kernel command line";
    withholdReconfiguration(t, &onReadOnly, boot);
    CHECK(boot.remedy == "reboot with rootflags=dax on the kernel command line");
    CHECK(boot.warnings.empty());
}

namespace
{

// The test bus's nmem0 (region0, region1) with a SMART health as ndctl
// showed it there: non-critical, 42 unsafe shutdowns.
Topology withHealth(const std::string &state, std::uint64_t count)
{
    Topology t = nfitTestBus();
    for (auto &d : t.dimms) {
        d.health.skip("not available: the DIMM has no SMART command");
        if (d.dev != "nmem0")
            continue;
        d.health = DimmHealth{};
        d.health.observe();
        d.health.healthState = state;
        d.health.shutdownCount = count;
    }
    return t; // its namespace0.0 (region0) is in the captured tree
}

Verdict nmem0Verdict(const Topology &t, const ShutdownCounts &seen)
{
    for (const auto &r : judgeDimms(t, {}, {{"region0", "/mnt/pmem"}}, seen))
        if (r.dimm->dev == "nmem0")
            return r.verdict;
    FAIL("no nmem0");
    throw;
}

} // namespace

TEST_CASE("dimms: fatal SMART health is a problem naming what is on the DIMM", "[dimm]")
{
    Verdict v = nmem0Verdict(withHealth("fatal", 42), {});
    CHECK(v.code == code::DimmHealthFatal);
    CHECK(v.severity == Severity::Problem);
    CHECK_THAT(v.summary, Catch::Contains("regions region0, region1; namespaces namespace0.0; "
                                          "mounts /mnt/pmem"));
    CHECK(nmem0Verdict(withHealth("critical", 42), {}).code == code::DimmHealthEvent);
    CHECK(nmem0Verdict(withHealth("non-critical", 42), {}).code == code::DimmOk);
}

TEST_CASE("dimms: a rise of the live unsafe-shutdown count since the agent looked", "[dimm]")
{
    Topology t = withHealth("non-critical", 43);
    const std::string key = "cdab-0a-07e0-ffffffff"; // nmem0's NFIT id
    Verdict rose = nmem0Verdict(t, {{key, 42}});
    CHECK(rose.code == code::DimmUnsafeShutdown);
    CHECK(rose.severity == Severity::Problem);
    CHECK_THAT(rose.summary, Catch::Contains("(42 -> 43)"));
    CHECK_THAT(rose.summary, Catch::Contains("namespaces namespace0.0; mounts /mnt/pmem"));
    CHECK_THAT(rose.remedy, Catch::Contains("application's own tools"));
    CHECK_THAT(rose.remedy, Catch::Contains("/mnt/pmem"));
    // The same count, a first look, or another DIMM's memory: no rise.
    CHECK(nmem0Verdict(t, {{key, 43}}).code == code::DimmOk);
    CHECK(nmem0Verdict(t, {}).code == code::DimmOk);
    CHECK(nmem0Verdict(t, {{"nmem0", 42}}).code == code::DimmOk);
}

TEST_CASE("dimms: no SMART is evidence, never a guess", "[dimm]")
{
    Topology t = withHealth("ok", 0);
    for (const auto &r : judgeDimms(t, {}))
        if (r.dimm->dev == "nmem4") {
            bool said = false;
            for (const auto &e : r.verdict.evidence)
                said |= e.check == "smart" && e.result.find("not available") == 0;
            CHECK(said);
        }
}
