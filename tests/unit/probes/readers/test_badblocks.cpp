// The badblocks file and the devices (disk, partitions) its ranges apply to.
#include <catch2/catch.hpp>

#include "probes/readers/badblocks.h"
#include "tests/unit/probes/temp_tree.h"

using namespace daxprobe;

TEST_CASE("badblocks lines parse, anything else is an error naming it", "[badblocks]")
{
    auto r = parseBadblocks("8 2\n100 3\n");
    REQUIRE(r);
    CHECK(*r == std::vector<BadRange>{{8, 2}, {100, 3}});
    CHECK(parseBadblocks("")->empty());
    for (const char *bad : {"8\n", "8 2 1\n", "x 2\n", "8 0\n", "18446744073709551615 2\n"}) {
        auto e = parseBadblocks(bad);
        REQUIRE_FALSE(e);
        CHECK(e.error().describe().find("SECTOR COUNT") != std::string::npos);
    }
}

TEST_CASE("a bus clears poison without a control function or with clear_error", "[badblocks]")
{
    CHECK(clearsPoison("virtio-pmem", ""));
    CHECK(clearsPoison("ACPI.NFIT", "ars_cap ars_start ars_status clear_error"));
    CHECK_FALSE(clearsPoison("ACPI.NFIT", ""));
    CHECK_FALSE(clearsPoison("ACPI.NFIT", "ars_cap clear_errors"));
}

TEST_CASE("a disk with bad blocks and its partitions are the devices to walk", "[badblocks]")
{
    TempTree t;
    t.write("sys/block/pmem0/badblocks", "4096 8\n");
    t.write("sys/block/pmem0/size", "1048576\n");
    t.write("sys/class/block/pmem0/dev", "259:0\n");
    t.write("sys/block/pmem0/pmem0p1/partition", "1\n");
    t.write("sys/block/pmem0/pmem0p1/start", "2048\n");
    t.write("sys/block/pmem0/pmem0p1/size", "1046528\n");
    t.write("sys/class/block/pmem0p1/dev", "259:1\n");
    t.write("sys/block/pmem1/badblocks", "");
    t.write("sys/bus/nd/devices/ndbus0/commands", "ars_cap\n");
    Topology topo;
    topo.buses.push_back({"ndbus0", "ACPI.NFIT", ""});
    NdRegion region;
    region.dev = "region0";
    region.bus = "ndbus0";
    topo.regions.push_back(region);
    NdNamespace ns;
    ns.dev = "namespace0.0";
    ns.region = "region0";
    ns.blockdev = "pmem0";
    ns.badblockCount = 8;
    topo.namespaces.push_back(ns);
    ns.dev = "namespace1.0";
    ns.blockdev = "pmem1";
    ns.badblockCount = 0;
    topo.namespaces.push_back(ns);
    auto root = Root::open(t.dir.string());
    REQUIRE(root);
    auto devs = readBadblockDevices(*root, topo);
    REQUIRE(devs.size() == 2);
    CHECK(devs[0].name == "pmem0");
    CHECK(devs[0].startSector == 0);
    CHECK(devs[0].sectors == 1048576);
    CHECK(devs[0].ranges == std::vector<BadRange>{{4096, 8}});
    CHECK(devs[0].bus == "ndbus0");
    CHECK_FALSE(devs[0].clearsPoison); // ACPI.NFIT without clear_error
    CHECK(devs[1].name == "pmem0p1");
    CHECK(devs[1].disk == "pmem0");
    CHECK((devs[1].major == 259 && devs[1].minor == 1));
    CHECK(devs[1].startSector == 2048);
    CHECK(devs[1].sectors == 1046528);
}
