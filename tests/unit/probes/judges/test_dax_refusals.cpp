// The kernel's other "cannot DAX" answers (fs/ext4/super.c, fs/xfs/
// xfs_super.c), each with its own cause and remedy: remounting with dax
// cannot help any of them. The lines are the ones Debian's kernels logged in
// the ext4-1k-dax guest (tests/vm/guest/scenarios/ext4-1k-dax.sh).
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "probes/judges/dax_refusals.h"
#include "probes/judges/verdict.h"

#include "tests/unit/probes/pmem_facts.h"

using namespace daxprobe;

namespace
{

std::vector<KmsgRecord> records(const std::vector<std::string> &lines)
{
    std::vector<KmsgRecord> out;
    std::uint64_t seq = 700;
    for (const auto &l : lines) {
        KmsgRecord r;
        REQUIRE(parseKmsgRecord(fmt::format("3,{},{},-;{}", seq, seq * 1000, l), r));
        ++seq;
        out.push_back(r);
    }
    return out;
}

// fsdax namespace, queue/dax 1: the device can DAX, the filesystem cannot.
Facts fsdaxFacts(const std::string &fstype, const std::string &superOptions,
                 const std::vector<std::string> &lines)
{
    Facts f = test::pmemFacts(fstype, superOptions);
    f.topology.buses.clear();
    f.topology.namespaces[0].map = "dev";
    MountLiveFacts live;
    live.statx.observe();
    live.statx.file = "/mnt/pmem/(O_TMPFILE)";
    live.mapSync.observe("mmap MAP_SYNC: Operation not supported");
    f.mountLive["/mnt/pmem"] = live;
    f.kmsg.records = records(lines);
    return f;
}

const MountReport &onlyMount(const Report &r)
{
    REQUIRE(r.mounts.size() == 1);
    return r.mounts[0];
}

} // namespace

TEST_CASE("each refusal line names its own cause", "[refusals]")
{
    CHECK(findDaxRefusal("EXT4-fs (pmem0): unsupported blocksize for DAX")->outcome ==
          DaxRefusal::Outcome::Note);
    CHECK(
        findDaxRefusal("XFS (pmem0): DAX not supported for blocksize. Turning off DAX.")->outcome ==
        DaxRefusal::Outcome::DaxOff);
    for (const char *l : {"EXT4-fs (pmem0): Cannot use DAX on a filesystem that may contain "
                          "inline data",
                          "EXT4-fs (pmem0): can't mount with both data=journal and dax",
                          "EXT4-fs (pmem0): can't change dax mount option while remounting",
                          "XFS (pmem0p1): DAX and reflink cannot work with multi-partitions!"})
        CHECK(findDaxRefusal(l)->outcome == DaxRefusal::Outcome::Fails);
    // The device's refusal depends on the namespace: verdict.cpp, not here.
    CHECK(findDaxRefusal("EXT4-fs (pmem0): DAX unsupported by block device.") == nullptr);
    CHECK(findDaxRefusal("XFS (pmem0): DAX unsupported by block device. Turning off DAX.") ==
          nullptr);
    // The line alone decides how its mount attempt ended.
    CHECK(classifyMountLine("EXT4-fs (pmem0): unsupported blocksize for DAX") == MountEvent::None);
    CHECK(classifyMountLine("EXT4-fs (pmem0): Cannot use DAX on a filesystem that may contain "
                            "inline data") == MountEvent::DaxRefused);
    CHECK(classifyMountLine("XFS (pmem0): DAX not supported for blocksize. Turning off DAX.") ==
          MountEvent::DaxTurnedOff);
}

TEST_CASE("ext4 with 1 KiB blocks: mkfs with 4 KiB blocks, not a remount", "[refusals][verdict]")
{
    // mount -o dax failed, then a plain mount: ext4 logs the block size at both.
    Facts f = fsdaxFacts("ext4", "rw",
                         {"EXT4-fs (pmem0): unsupported blocksize for DAX",
                          "EXT4-fs (pmem0): DAX unsupported by block device.",
                          "EXT4-fs (pmem0): unsupported blocksize for DAX",
                          "EXT4-fs (pmem0): mounted filesystem with ordered data mode. Quota "
                          "mode: none."});
    Report r = evaluate(f);
    const Verdict &v = onlyMount(r).verdict;
    CHECK(v.code == code::DaxNotRequested);
    CHECK(v.severity == Severity::Problem);
    CHECK_THAT(v.summary, Catch::Contains("block size is smaller than the page size"));
    CHECK(v.remedy == "umount /mnt/pmem; mkfs.ext4 -F -b 4096 /dev/pmem0; mount -o dax=always "
                      "/dev/pmem0 /mnt/pmem   # destroys the data on /dev/pmem0: back it up first");
    CHECK_THAT(v.remedy, !Catch::StartsWith("umount /mnt/pmem && mount"));
    CHECK(r.exitCode == 1);
}

TEST_CASE("XFS with 1 KiB blocks turns DAX off: mkfs with page-size blocks", "[refusals][verdict]")
{
    Facts f =
        fsdaxFacts("xfs", "rw,attr2,inode64,dax=never",
                   {"XFS (pmem0): DAX not supported for blocksize. Turning off DAX.",
                    "XFS (pmem0): Mounting V5 Filesystem", "XFS (pmem0): Ending clean mount"});
    f.mounts[0].mountOptions = "rw,relatime";
    Report r = evaluate(f);
    const Verdict &v = onlyMount(r).verdict;
    CHECK(v.code == code::DaxSilentlyOff);
    CHECK_THAT(v.remedy,
               Catch::StartsWith("umount /mnt/pmem; mkfs.xfs -f -b size=4096 /dev/pmem0"));
}

TEST_CASE("inline data and data=journal: earlier refusals decide the remedy", "[refusals][verdict]")
{
    Facts f = fsdaxFacts("ext4", "rw",
                         {"EXT4-fs (pmem0): Cannot use DAX on a filesystem that may contain "
                          "inline data",
                          "EXT4-fs (pmem0): mounted filesystem with ordered data mode. Quota "
                          "mode: none."});
    Report r = evaluate(f);
    CHECK_THAT(onlyMount(r).verdict.remedy, Catch::Contains("mkfs.ext4 -F -O ^inline_data"));

    f = fsdaxFacts("ext4", "rw",
                   {"EXT4-fs (pmem0): can't mount with both data=journal and dax",
                    "EXT4-fs (pmem0): mounted filesystem with ordered data mode. Quota mode: "
                    "none."});
    r = evaluate(f);
    CHECK_THAT(onlyMount(r).verdict.remedy,
               Catch::StartsWith("umount /mnt/pmem; tune2fs -o ^journal_data /dev/pmem0; mount "
                                 "-o dax=always,data=ordered"));

    // A raw namespace is the first cause: its remedy rebuilds the namespace.
    f.topology.namespaces[0].mode = "raw";
    f.blockdevs[0].queueDax = false;
    r = evaluate(f);
    CHECK_THAT(onlyMount(r).verdict.remedy, Catch::Contains("ndctl create-namespace"));
}

TEST_CASE("a DAX mount is judged by its files, not by a refused remount", "[refusals][verdict]")
{
    Facts f = fsdaxFacts("ext4", "rw,dax=always",
                         {"EXT4-fs (pmem0): mounted filesystem with ordered data mode. Quota "
                          "mode: none.",
                          "EXT4-fs (pmem0): can't change dax mount option while remounting"});
    f.mountLive["/mnt/pmem"].statx.dax = true;
    f.mountLive["/mnt/pmem"].mapSync.observe();
    f.mountLive["/mnt/pmem"].mapSync.mapped = true;
    Report r = evaluate(f);
    CHECK(onlyMount(r).verdict.code == code::DaxActive);
    CHECK(onlyMount(r).verdict.remedy.empty());
    REQUIRE(onlyMount(r).kmsgHistory.size() == 1);
    CHECK(onlyMount(r).kmsgHistory[0].attempt == "failed");
}

// xfs_setup_dax_always() fails the mount for a reflink filesystem: 6.x on a
// partition, older kernels on any device. A remount cannot help either.
TEST_CASE("XFS reflink on a partition: mkfs without reflink, not a remount", "[refusals][verdict]")
{
    Facts f =
        fsdaxFacts("xfs", "rw,attr2,inode64,logbufs=8,logbsize=32k,noquota",
                   {"XFS (pmem0p1): DAX and reflink cannot work with multi-partitions!",
                    "XFS (pmem0p1): Mounting V5 Filesystem", "XFS (pmem0p1): Ending clean mount"});
    f.blockdevs.push_back({"pmem0p1", 259, 1, true});
    f.mounts[0].minor = 1;
    f.mounts[0].source = "/dev/pmem0p1";
    Report r = evaluate(f);
    const Verdict &v = onlyMount(r).verdict;
    CHECK(v.code == code::DaxNotRequested);
    CHECK(v.severity == Severity::Problem);
    CHECK_THAT(v.summary, Catch::Contains("only on a whole pmem device, not a partition"));
    CHECK(v.remedy == "umount /mnt/pmem; mkfs.xfs -f -m reflink=0 /dev/pmem0p1; mount -o "
                      "dax=always /dev/pmem0p1 /mnt/pmem   # destroys the data on /dev/pmem0p1: "
                      "back it up first");
    CHECK(r.exitCode == 1);
}

TEST_CASE("XFS reflink on an older kernel: mkfs without reflink", "[refusals][verdict]")
{
    Facts f =
        fsdaxFacts("xfs", "rw,attr2,inode64,logbufs=8,logbsize=32k,noquota",
                   {"XFS (pmem0): DAX and reflink cannot be used together!",
                    "XFS (pmem0): Mounting V5 Filesystem", "XFS (pmem0): Ending clean mount"});
    Report r = evaluate(f);
    const Verdict &v = onlyMount(r).verdict;
    CHECK(v.code == code::DaxNotRequested);
    CHECK(v.severity == Severity::Problem);
    CHECK_THAT(v.summary, Catch::Contains("cannot use DAX on a reflink filesystem"));
    CHECK(v.remedy == "umount /mnt/pmem; mkfs.xfs -f -m reflink=0 /dev/pmem0; mount -o "
                      "dax=always /dev/pmem0 /mnt/pmem   # destroys the data on /dev/pmem0: "
                      "back it up first");
    CHECK(r.exitCode == 1);
}
