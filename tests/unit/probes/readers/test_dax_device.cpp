// A device-DAX device's mode as daxctl shows it: the driver bound to it, and
// for kmem (system-ram) its memory blocks. The guests' captures are compared
// with `daxctl list` in test_ndctl_oracle.cpp; these trees add the states the
// guests do not reach (no driver, blocks offline, not movable).
#include <catch2/catch.hpp>

#include "probes/judges/verdict.h"
#include "probes/readers/dax_device.h"
#include "tests/unit/probes/temp_tree.h"

using namespace daxprobe;

namespace
{

const std::string kDev = "sys/bus/nd/devices/ndbus0/region0/dax0.0/dax0.0";
const std::string kMem = "sys/devices/system/memory/";

DaxDevice readDaxDevice(const TempTree &t)
{
    auto root = Root::open(t.dir.string());
    REQUIRE(root);
    return readDaxDevice(*root, kDev, "dax0.0");
}

// 512 MiB of device at 4.5 GiB; 128 MiB memory blocks 0x24..0x27 are its own,
// 0x0 and 0x28 are not.
void device(TempTree &t)
{
    t.write(kDev + "/size", "534773760\n");
    t.write(kDev + "/align", "2097152\n");
    t.write(kDev + "/target_node", "0\n");
    t.write(kDev + "/resource", "0x120000000\n");
    t.write(kMem + "block_size_bytes", "8000000\n");
    for (const char *b : {"0", "24", "25", "26", "27", "28"}) {
        std::string dir = kMem + "memory" + std::to_string(std::stoul(b, nullptr, 16));
        t.write(dir + "/phys_index", std::string("000000") + (b[1] ? "" : "0") + b + "\n");
        t.write(dir + "/state", "online\n");
        t.write(dir + "/valid_zones", "Movable\n");
    }
}

} // namespace

TEST_CASE("device_dax bound: devdax, no memory blocks", "[dax_device]")
{
    TempTree t;
    device(t);
    t.write("sys/bus/dax/drivers/device_dax/dax0.0/size", "534773760\n");
    DaxDevice d = readDaxDevice(t);
    CHECK(d.mode == "devdax");
    CHECK(d.state.empty());
    CHECK(d.size == 534773760);
    CHECK(d.align == 2097152);
    CHECK(d.targetNode == 0);
    CHECK(!d.totalMemblocks);
    CHECK(!d.movable);
}

TEST_CASE("kmem bound: system-ram, the device's own memory blocks", "[dax_device]")
{
    TempTree t;
    device(t);
    t.write("sys/bus/dax/drivers/kmem/dax0.0/size", "534773760\n");
    DaxDevice d = readDaxDevice(t);
    CHECK(d.mode == "system-ram");
    // 534773760 bytes reach into block 0x27 (0x13e000000 < 0x140000000).
    CHECK(d.totalMemblocks == 4u);
    CHECK(d.onlineMemblocks == 4u);
    CHECK(d.movable == true);

    t.write(kMem + "memory38/state", "offline\n");
    t.write(kMem + "memory38/valid_zones", "Normal Movable\n");
    t.write(kMem + "memory37/valid_zones", "Normal\n");
    d = readDaxDevice(t);
    CHECK(d.totalMemblocks == 4u);
    CHECK(d.onlineMemblocks == 3u);
    CHECK(d.movable == false);

    for (const char *b : {"36", "37", "38", "39"})
        t.write(kMem + "memory" + b + "/state", "offline\n");
    d = readDaxDevice(t);
    CHECK(d.onlineMemblocks == 0u);
    CHECK(!d.movable); // daxctl shows movable only for online memory
}

TEST_CASE("a memory block that starts exactly at the device's end is not its own", "[dax_device]")
{
    // 512 MiB exactly, four 128 MiB blocks: block 0x28 begins at the first
    // byte past the device (0x120000000 + 0x20000000), and is the next
    // device's or the boot RAM's, as libdaxctl's walk says.
    TempTree t;
    device(t);
    t.write(kDev + "/size", "536870912\n");
    t.write("sys/bus/dax/drivers/kmem/dax0.0/size", "536870912\n");
    t.write(kMem + "memory40/state", "offline\n");
    DaxDevice d = readDaxDevice(t);
    CHECK(d.totalMemblocks == 4u);
    CHECK(d.onlineMemblocks == 4u);
    CHECK(d.movable == true);
}

TEST_CASE("no driver bound: disabled, no mode", "[dax_device]")
{
    TempTree t;
    device(t);
    DaxDevice d = readDaxDevice(t);
    CHECK(d.mode.empty());
    CHECK(d.state == "disabled");
}

TEST_CASE("sysfs hex attributes", "[dax_device]")
{
    CHECK(parseHex("00000024") == 0x24u);
    CHECK(parseHex("0x120000000") == 0x120000000u);
    CHECK(parseHex("8000000\n") == 0x8000000u);
    CHECK(!parseHex(""));
    CHECK(!parseHex("0x"));
    CHECK(!parseHex("12g"));
}

TEST_CASE("a devdax namespace whose device is system RAM is a problem", "[dax_device][verdict]")
{
    NdNamespace ns;
    ns.dev = "namespace0.0";
    ns.mode = "devdax";
    ns.chardev = "dax0.0";
    DaxDevice d;
    d.chardev = "dax0.0";
    d.mode = "devdax";
    Verdict dv = judgeNamespace(ns, &d);
    CHECK(dv.code == code::DaxCapable);
    CHECK_THAT(dv.summary, Catch::Contains("map /dev/dax0.0"));

    d.mode = "system-ram";
    d.totalMemblocks = 4;
    d.onlineMemblocks = 4;
    d.movable = true;
    Verdict v = judgeNamespace(ns, &d);
    CHECK(v.code == code::SystemRam);
    CHECK(v.severity == Severity::Problem);
    CHECK_THAT(v.summary, Catch::Contains("not persistent"));
    CHECK_THAT(v.remedy,
               Catch::StartsWith("daxctl reconfigure-device --mode=devdax --force dax0.0"));
    CHECK(v.warnings.empty());
    REQUIRE(v.evidence.size() == 2);
    CHECK(v.evidence[1].result == "dax0.0 mode system-ram, 4 of 4 memory blocks online, movable");

    d.movable = false;
    v = judgeNamespace(ns, &d);
    REQUIRE(v.warnings.size() == 1);
    CHECK_THAT(v.warnings[0], Catch::Contains("not movable"));
}
