// A mount's device by the number mountinfo gives it (issue 44): the kernel's
// own root is "/dev/root", a node that does not exist; a partition is tied
// to its disk, whose queue/dax and namespace are the ones that count.
#include <catch2/catch.hpp>

#include "probes/readers/blockdev.h"
#include "probes/readers/kernel_cmdline.h"
#include "probes/readers/root_facts.h"
#include "tests/unit/probes/temp_tree.h"

using namespace daxprobe;

namespace
{

// The sysfs files a Kata guest shows for its root, pmem0p1 on pmem0 (6.1).
void kataDisk(TempTree &t)
{
    t.write("sys/dev/block/259:1/uevent", "MAJOR=259\nMINOR=1\nDEVNAME=pmem0p1\nDEVTYPE=partition\n"
                                          "DISKSEQ=1\nPARTN=1\n");
    t.write("sys/block/pmem0/pmem0p1/partition", "1\n");
    t.write("sys/block/pmem0/pmem0p1/start", "2048\n");
    t.write("sys/class/block/pmem0/dev", "259:0\n");
    t.write("sys/class/block/pmem0/queue/dax", "1\n");
}

} // namespace

TEST_CASE("a partition is found by its number and tied to its disk", "[blockdev]")
{
    TempTree t;
    kataDisk(t);
    auto root = Root::open(t.dir.string());
    REQUIRE(root);
    auto b = readBlockDevByNumber(*root, 259, 1);
    REQUIRE(b);
    CHECK(b->name == "pmem0p1");
    CHECK(b->partition());
    CHECK(b->disk() == "pmem0");
    CHECK(b->partitionStart == std::optional<std::uint64_t>(1 << 20));
    CHECK(b->queueDax == std::optional<bool>(true));  // the disk's: a partition has no queue/
    CHECK_FALSE(readBlockDevByNumber(*root, 259, 7)); // no such device
}

TEST_CASE("a whole disk by number is its own disk", "[blockdev]")
{
    TempTree t;
    t.write("sys/dev/block/259:0/uevent", "MAJOR=259\nMINOR=0\nDEVNAME=pmem0\nDEVTYPE=disk\n");
    t.write("sys/class/block/pmem0/queue/dax", "0\n");
    auto root = Root::open(t.dir.string());
    REQUIRE(root);
    auto b = readBlockDevByNumber(*root, 259, 0);
    REQUIRE(b);
    CHECK_FALSE(b->partition());
    CHECK(b->disk() == "pmem0");
    CHECK(b->partitionStart == std::optional<std::uint64_t>(0));
    CHECK(b->queueDax == std::optional<bool>(false));
}

TEST_CASE("a device name that is not one path component is refused", "[blockdev]")
{
    TempTree t;
    for (const char *name : {"../../etc", "a/b", "", ".."}) {
        t.write("sys/dev/block/8:0/uevent", std::string("DEVNAME=") + name + "\nDEVTYPE=disk\n");
        auto root = Root::open(t.dir.string());
        REQUIRE(root);
        CHECK_FALSE(readBlockDevByNumber(*root, 8, 0));
    }
}

TEST_CASE("the kernel's own root (/dev/root) is tied to its partition by number", "[blockdev]")
{
    TempTree t;
    kataDisk(t);
    t.write("proc/self/mountinfo",
            "24 1 259:1 / / ro,relatime - ext4 /dev/root ro,errors=remount-ro,data=ordered\n"
            "25 24 0:5 / /dev rw - devtmpfs devtmpfs rw\n");
    t.write("proc/cmdline", "root=/dev/pmem0p1 rootflags=data=ordered,errors=remount-ro ro "
                            "rootfstype=ext4 console=hvc0\n");
    auto root = Root::open(t.dir.string());
    REQUIRE(root);
    Facts f;
    NdNamespace ns;
    ns.dev = "namespace0.0";
    ns.mode = "fsdax";
    ns.blockdev = "pmem0";
    f.topology.namespaces.push_back(ns);
    readRootFacts(*root, f);
    REQUIRE(f.mounts.size() == 2);
    const BlockDevFacts *b = f.blockdevByNumber(259, 1);
    REQUIRE(b);
    CHECK(b->name == "pmem0p1");
    CHECK(b->disk() == "pmem0");
    CHECK(isDaxCandidate(f, f.mounts[0]));
    CHECK_FALSE(isDaxCandidate(f, f.mounts[1]));
    CHECK(f.blockdevByNumber(259, 0)); // the namespace's disk, read by name
    CHECK(f.kernelCmdline.find("rootflags=data=ordered") != std::string::npos);
}

TEST_CASE("a kernel parameter's value: the last one wins, quotes group", "[blockdev]")
{
    CHECK(kernelParam("root=/dev/pmem0p1 rootflags=dax,data=ordered ro", "rootflags") ==
          std::optional<std::string>("dax,data=ordered"));
    CHECK(kernelParam("rootflags=a rootflags=b", "rootflags") == std::optional<std::string>("b"));
    CHECK(kernelParam("x=\"rootflags=no\" rootflags=\"a b\"", "rootflags") ==
          std::optional<std::string>("a b"));
    CHECK_FALSE(kernelParam("rootflagsx=1 root=/dev/vda", "rootflags"));
    CHECK_FALSE(kernelParam("ro -- rootflags=init", "rootflags"));
    CHECK(kernelParam("rootflags=", "rootflags") == std::optional<std::string>(""));
}
