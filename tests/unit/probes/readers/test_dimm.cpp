// DIMMs (issue 36) as read from the tree captured on the kernel's NVDIMM
// test bus (tests/fixtures/nfit-test-nfit: nfit_test's two buses and six
// DIMMs, one DIMM not armed with save, restore and flush failed, one map
// failed).
#include <catch2/catch.hpp>

#include "probes/readers/sysfs_topology.h"

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
