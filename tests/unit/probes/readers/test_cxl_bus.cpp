#include <catch2/catch.hpp>

#include "probes/readers/cxl_bus.h"
#include "tests/unit/probes/cxl_tree.h"

using namespace daxprobe;

namespace
{

CxlBus read(const TempTree &tree)
{
    auto root = Root::open(tree.dir.string());
    REQUIRE(root);
    return readCxlBus(*root);
}

} // namespace

TEST_CASE("no /sys/bus/cxl is an observed, empty bus", "[cxl][reader]")
{
    TempTree tree;
    tree.write("sys/bus/nd/devices/ndbus0/provider", "ACPI.NFIT\n");
    CxlBus bus = read(tree);
    CHECK(bus.observed());
    CHECK(bus.empty());
}

// The captured trees are held to cxl list in test_cxl_fixtures.cpp; this
// hand-made one checks the fields cxl list does not print (uid, dports).
TEST_CASE("the CXL hierarchy is walked from its root as libcxl walks it", "[cxl][reader]")
{
    CxlTree tree;
    tree.region();
    CxlBus bus = read(tree);
    REQUIRE(bus.observed());

    REQUIRE(bus.memdevs.size() == 1);
    CHECK(bus.memdevs[0].dev == "mem0");
    CHECK(bus.memdevs[0].serial == 1u);
    CHECK(bus.memdevs[0].pmemSize == 1ULL << 30);
    CHECK(bus.memdevs[0].ramSize == 0);
    CHECK(bus.memdevs[0].endpoint == "endpoint2");

    REQUIRE(bus.ports.size() == 3);
    const CxlPort *hb = bus.port("port1");
    REQUIRE(hb);
    CHECK(hb->kind == "switch");
    CHECK(hb->parent == "root0");
    CHECK(hb->uid == 12u);
    REQUIRE(hb->dports.size() == 1);
    CHECK(hb->dports[0].id == 0);
    CHECK(hb->dports[0].device == "0000:0c:00.0");
    CHECK_FALSE(hb->decodersCommitted);
    REQUIRE(bus.port("root0"));
    CHECK(bus.port("root0")->dports.at(0).id == 12);
    REQUIRE(bus.port("endpoint2"));
    CHECK(bus.port("endpoint2")->memdev == "mem0");
    CHECK(bus.port("endpoint2")->parent == "port1");

    const CxlDecoder *rootDecoder = bus.decoder("decoder0.0");
    REQUIRE(rootDecoder);
    CHECK(rootDecoder->kind == "root");
    CHECK(rootDecoder->capPmem);
    CHECK(rootDecoder->start == 0x490000000ULL);
    CHECK(rootDecoder->size == 4ULL << 30);
    CHECK(rootDecoder->targets == std::vector<std::string>{"12"});
    REQUIRE(bus.decoder("decoder1.0"));
    CHECK(bus.decoder("decoder1.0")->kind == "switch");
    CHECK(bus.decoder("decoder1.0")->region == "region0");
    REQUIRE(bus.decoder("decoder2.0"));
    CHECK(bus.decoder("decoder2.0")->mode == "pmem");
    CHECK(bus.decoder("decoder2.0")->port == "endpoint2");

    REQUIRE(bus.regions.size() == 1);
    const CxlRegion &r = bus.regions[0];
    CHECK(r.dev == "region0");
    CHECK(r.rootDecoder == "decoder0.0");
    CHECK(r.type == "pmem"); // 6.1: no mode attribute, its endpoint decoder's mode
    CHECK(r.size == 256ULL << 20);
    CHECK(r.committed == true);
    CHECK(r.targets == std::vector<std::string>{"decoder2.0"});

    REQUIRE(bus.bridges.size() == 1);
    CHECK(bus.bridges[0].dev == "nvdimm-bridge0");
    CHECK(bus.bridges[0].ndBus == "ndbus0");
}

TEST_CASE("hostile CXL trees give what they can, bounded", "[cxl][reader][hostile]")
{
    CxlTree tree;
    SECTION("garbage attributes are absent values, not guesses")
    {
        tree.write("sys/bus/cxl/devices/mem0/serial", "0xzz\n");
        tree.write("sys/bus/cxl/devices/mem0/pmem/size", "-1\n");
        CxlBus bus = read(tree);
        REQUIRE(bus.memdevs.size() == 1);
        CHECK_FALSE(bus.memdevs[0].serial);
        CHECK(bus.memdevs[0].pmemSize == 0);
    }
    SECTION("a port nested deeper than any real hierarchy stops the walk")
    {
        std::string dir = "sys/bus/cxl/devices/root0";
        for (int i = 0; i < 20; ++i)
            dir += "/port" + std::to_string(100 + i);
        tree.write(dir + "/decoder9.0/size", "0x1\n");
        CxlBus bus = read(tree);
        CHECK(bus.ports.size() <= 3 + 9);
        CHECK_FALSE(bus.decoder("decoder9.0"));
    }
    SECTION("names that only look like devices are ignored")
    {
        tree.write("sys/bus/cxl/devices/memory/serial", "0x2\n");
        tree.write("sys/bus/cxl/devices/root0/port1/decoderX.Y/size", "0x1\n");
        tree.write("sys/bus/cxl/devices/root0/port1/dportA/uevent", "\n");
        CxlBus bus = read(tree);
        CHECK(bus.memdevs.size() == 1);
        CHECK_FALSE(bus.decoder("decoderX.Y"));
        CHECK(bus.port("port1")->dports.size() == 1);
    }
}
