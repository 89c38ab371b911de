// The sysfs topology reader on hand-made trees: the rules ndctl applies that
// the captured guests do not all exercise (seeds, disabled claims, sector
// mode, the label-managed available size, persistence names). The captured
// trees themselves are compared with ndctl/daxctl in test_ndctl_oracle.cpp.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "probes/capture/topology_json.h"
#include "probes/readers/sysfs_topology.h"
#include "tests/unit/probes/temp_tree.h"

using namespace daxprobe;

namespace
{

Topology readTree(const TempTree &t)
{
    auto root = Root::open(t.dir.string());
    REQUIRE(root);
    return readTopologyFromSysfs(*root);
}

const std::string kBus = "sys/bus/nd/devices/ndbus0/";
const std::string kRegion = kBus + "region0/";

// One label-less NFIT region, as QEMU's NVDIMM shows it.
void region(TempTree &t, const std::string &nstype = "4")
{
    t.write(kBus + "provider", "ACPI.NFIT\n");
    t.write(kBus + "wait_probe", "0\n");
    t.write(kRegion + "size", "536870912\n");
    t.write(kRegion + "align", "16777216\n");
    t.write(kRegion + "available_size", "1048576\n");
    t.write(kRegion + "nstype", nstype + "\n");
    t.write(kRegion + "persistence_domain", "\n");
    t.write(kRegion + "numa_node", "0\n");
    t.write(kRegion + "badblocks", "");
    // Seeds: idle claim devices the kernel keeps ready.
    t.write(kRegion + "pfn0.0/namespace", "\n");
    t.write(kRegion + "dax0.0/namespace", "\n");
    t.write(kRegion + "btt0.0/namespace", "\n");
    t.write(kRegion + "pfn_seed", "pfn0.0\n");
}

void fsdax(TempTree &t)
{
    t.write(kRegion + "namespace0.0/size", "536870912\n");
    t.write(kRegion + "namespace0.0/mode", "memory\n");
    t.write(kRegion + "namespace0.0/holder", "pfn0.1\n");
    t.write(kRegion + "pfn0.1/namespace", "namespace0.0\n");
    t.write(kRegion + "pfn0.1/mode", "pmem\n");
    t.write(kRegion + "pfn0.1/size", "526385152\n");
    t.write(kRegion + "pfn0.1/align", "2097152\n");
    t.write(kRegion + "pfn0.1/uuid", "9d26eeca-22f6-420e-8cf5-be47ba27e6e0\n");
    t.write(kRegion + "pfn0.1/block/pmem0/dev", "259:0\n");
}

} // namespace

TEST_CASE("an fsdax namespace reads as ndctl lists it", "[sysfs]")
{
    TempTree t;
    region(t);
    fsdax(t);
    t.write("sys/block/pmem0/badblocks", "8 2\n100 3\n");
    Topology topo = readTree(t);
    CHECK(topo.observed());
    CHECK(topo.text.empty());
    REQUIRE(topo.buses.size() == 1);
    CHECK(topo.buses[0].dev == "ndbus0");
    CHECK(topo.buses[0].provider == "ACPI.NFIT");
    REQUIRE(topo.regions.size() == 1);
    const NdRegion &r = topo.regions[0];
    CHECK(r.dev == "region0");
    CHECK(r.bus == "ndbus0");
    CHECK(r.type == "pmem");
    CHECK(r.size == 536870912);
    CHECK(r.align == 16777216);
    CHECK(r.availableSize == 0); // label-less: nothing to hand out, as ndctl says
    CHECK(r.persistenceDomain == "unknown");
    CHECK(r.numaNode == 0);
    REQUIRE(topo.namespaces.size() == 1);
    const NdNamespace &n = topo.namespaces[0];
    CHECK(n.dev == "namespace0.0");
    CHECK(n.region == "region0");
    CHECK(n.mode == "fsdax");
    CHECK(n.map == "dev");
    CHECK(n.size == 526385152);     // the pfn's usable size, not the namespace's
    CHECK(n.rawSize == 536870912u); // the namespace's own: struct_pages.h takes the difference
    CHECK(n.align == 2097152);
    CHECK(n.uuid == "9d26eeca-22f6-420e-8cf5-be47ba27e6e0");
    CHECK(n.blockdev == "pmem0");
    CHECK(n.chardev.empty());
    CHECK(n.badblockCount == 5);
}

TEST_CASE("a labelled region reports its available size", "[sysfs]")
{
    TempTree t;
    region(t, "5");
    Topology topo = readTree(t);
    REQUIRE(topo.regions.size() == 1);
    CHECK(topo.regions[0].availableSize == 1048576);
    CHECK(topo.namespaces.empty()); // only seeds
}

TEST_CASE("idle namespaces and disabled claims are hidden, as ndctl hides them", "[sysfs]")
{
    TempTree t;
    region(t);
    // A seed namespace: no driver bound, so no block device.
    t.write(kRegion + "namespace0.1/size", "0\n");
    t.write(kRegion + "namespace0.1/mode", "raw\n");
    // A namespace whose pfn claim is not enabled (no disk under it).
    t.write(kRegion + "namespace0.2/size", "4096\n");
    t.write(kRegion + "pfn0.3/namespace", "namespace0.2\n");
    t.write(kRegion + "pfn0.3/mode", "pmem\n");
    Topology topo = readTree(t);
    CHECK(topo.namespaces.empty());
}

TEST_CASE("raw, sector and devdax namespaces", "[sysfs]")
{
    TempTree t;
    region(t);
    t.write(kRegion + "namespace0.0/size", "536870912\n");
    t.write(kRegion + "namespace0.0/mode", "raw\n");
    t.write(kRegion + "namespace0.0/block/pmem0/dev", "259:0\n");
    t.write(kRegion + "namespace0.10/size", "1048576\n");
    t.write(kRegion + "namespace0.10/uuid", "5c3c3973-de24-4d72-80cc-cc35295a0ae1\n");
    t.write(kRegion + "btt0.1/namespace", "namespace0.10\n");
    t.write(kRegion + "btt0.1/size", "1000000\n");
    t.write(kRegion + "btt0.1/sector_size", "512 520 528 [4096] 4104 4160 4224 \n");
    t.write(kRegion + "btt0.1/uuid", "9d1a2b3c-0000-4000-8000-000000000001\n");
    t.write(kRegion + "btt0.1/block/pmem0s/dev", "259:1\n");
    t.write(kRegion + "namespace0.2/size", "8388608\n");
    t.write(kRegion + "namespace0.2/uuid", "00000000-0000-0000-0000-000000000000\n");
    t.write(kRegion + "dax0.1/namespace", "namespace0.2\n");
    t.write(kRegion + "dax0.1/mode", "ram\n");
    t.write(kRegion + "dax0.1/size", "6291456\n");
    t.write(kRegion + "dax0.1/align", "2097152\n");
    t.write(kRegion + "dax0.1/uuid", "0ed0dc8f-4cde-4468-bba1-baf8baa024b2\n");
    t.write(kRegion + "dax0.1/dax_region/id", "0\n");
    t.write(kRegion + "dax0.1/dax0.1/size", "6291456\n");
    Topology topo = readTree(t);
    REQUIRE(topo.namespaces.size() == 3);
    // In id order: 0, 2, 10 (not the directory's 0, 10, 2).
    const NdNamespace &raw = topo.namespaces[0];
    CHECK(raw.dev == "namespace0.0");
    CHECK(raw.mode == "raw");
    CHECK(raw.size == 536870912);
    CHECK(raw.rawSize == 536870912u); // no claim: all of it is usable
    CHECK(raw.blockdev == "pmem0");
    CHECK(raw.uuid.empty());
    CHECK(raw.align == 0);
    const NdNamespace &dax = topo.namespaces[1];
    CHECK(dax.dev == "namespace0.2");
    CHECK(dax.mode == "devdax");
    CHECK(dax.map == "mem");
    CHECK(dax.size == 6291456);
    CHECK(dax.rawSize == 8388608u);
    CHECK(dax.chardev == "dax0.1");
    CHECK(dax.blockdev.empty());
    CHECK(dax.uuid == "0ed0dc8f-4cde-4468-bba1-baf8baa024b2");
    const NdNamespace &sector = topo.namespaces[2];
    CHECK(sector.dev == "namespace0.10");
    CHECK(sector.mode == "sector");
    CHECK(sector.size == 1000000);
    CHECK(sector.blockdev == "pmem0s");
    // As ndctl list: the BTT's sector size and uuid (the label's is raw_uuid).
    CHECK(sector.sectorSize == 4096);
    CHECK(sector.uuid == "9d1a2b3c-0000-4000-8000-000000000001");
}

TEST_CASE("no nd bus is an empty, available topology; a broken sysfs is an error", "[sysfs]")
{
    TempTree none;
    none.write("sys/bus/.keep", "");
    Topology empty = readTree(none);
    CHECK(empty.observed());
    CHECK(empty.text.empty());
    CHECK(empty.buses.empty());

    TempTree broken;
    broken.write("sys/bus/nd/devices", "not a directory\n");
    Topology bad = readTree(broken);
    CHECK(bad.failed());
    CHECK_FALSE(bad.text.empty());
}

TEST_CASE("nd device names, persistence domains and uuids", "[sysfs]")
{
    unsigned region = 9, id = 9;
    CHECK(parseNdDeviceName("namespace3.12", "namespace", region, id));
    CHECK(region == 3);
    CHECK(id == 12);
    CHECK(parseNdDeviceName("region7", "region", region, id));
    CHECK(id == 7);
    CHECK_FALSE(parseNdDeviceName("pfn_seed", "pfn", region, id));
    CHECK_FALSE(parseNdDeviceName("dax_region", "dax", region, id));
    CHECK_FALSE(parseNdDeviceName("namespace0.", "namespace", region, id));
    CHECK_FALSE(parseNdDeviceName("pfn", "pfn", region, id));

    CHECK(std::string(persistenceDomainName("cpu_cache")) == "cpu_cache");
    CHECK(std::string(persistenceDomainName("memory_controller")) == "memory_controller");
    CHECK(std::string(persistenceDomainName("none")) == "none");
    CHECK(std::string(persistenceDomainName("")) == "unknown");

    CHECK(uuidOrEmpty("00000000-0000-0000-0000-000000000000").empty());
    CHECK(uuidOrEmpty("").empty());
    CHECK(uuidOrEmpty("e1129ddd-1c58-4cb1-8a7e-d179d1c5c555") ==
          "e1129ddd-1c58-4cb1-8a7e-d179d1c5c555");
}

// `daxprobe check --capture` keeps only the files read (the fixtures are made
// so): every directory the reader relies on must be recorded through a file
// read in it, or a replay of the capture loses namespaces.
TEST_CASE("a recorded read of the tree replays to the same topology", "[sysfs][capture]")
{
    TempTree live;
    region(live);
    fsdax(live);
    live.write(kRegion + "namespace0.1/size", "1048576\n");
    live.write(kRegion + "namespace0.1/mode", "raw\n");
    live.write(kRegion + "namespace0.1/block/pmem1/dev", "259:1\n");
    live.write(kRegion + "namespace0.2/size", "8388608\n");
    live.write(kRegion + "namespace0.2/mode", "dax\n");
    live.write(kRegion + "dax0.1/namespace", "namespace0.2\n");
    live.write(kRegion + "dax0.1/mode", "pmem\n");
    live.write(kRegion + "dax0.1/size", "6291456\n");
    live.write(kRegion + "dax0.1/dax0.1/size", "6291456\n");

    TempTree captured;
    auto root = Root::open(live.dir.string());
    REQUIRE(root);
    root->setRecorder([&captured](const std::string &path, std::string_view content) {
        captured.write(path, std::string(content));
    });
    Topology original = readTopologyFromSysfs(*root);
    REQUIRE(original.namespaces.size() == 3);
    Topology replayed = readTree(captured);
    CHECK(nlohmann::json(replayed).dump() == nlohmann::json(original).dump());
}
