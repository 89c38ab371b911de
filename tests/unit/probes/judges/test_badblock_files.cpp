// The bad-block judge: which files, which sectors no file holds, the rewrite
// command, and that bad blocks stay a warning (the exit code keeps its meaning).
#include <catch2/catch.hpp>

#include <fstream>
#include <regex>
#include <sstream>

#include "probes/capture/live_facts.h"

#include "probes/judges/badblock_files.h"
#include "probes/judges/verdict.h"
#include "tests/unit/probes/pmem_facts.h"

using namespace daxprobe;

namespace
{

// pmem0 of 1 GiB, 8 bad sectors at 10000, walked completely.
BadblockScan scanOf(std::vector<DamagedExtent> extents)
{
    BadblockScan s;
    s.disk = "pmem0";
    s.sectors = 1 << 21;
    s.ranges = {{10000, 8}};
    s.extents = std::move(extents);
    s.filesScanned = 3;
    s.observe();
    return s;
}

} // namespace

TEST_CASE("bad sectors in a file name it, its bytes and its rewrite", "[badblocks]")
{
    // sectors 10000-10003 are bytes 8192-10239 of the file; 10004-10007 no file's
    BadblockScan s = scanOf({{"/mnt/pmem/f", 8192, 2048, 10000}});
    auto br = judgeBadblocks(s);
    REQUIRE(br);
    CHECK(br->verdict.code == "badblocks_in_files");
    CHECK(br->verdict.severity == Severity::Warning);
    CHECK(br->badSectors == 8);
    REQUIRE(br->files.size() == 1);
    CHECK(br->files[0].path == "/mnt/pmem/f");
    // the whole page holding bytes 8192-10239: page 2
    CHECK(br->files[0].rewrite ==
          "dd if=/dev/zero of=/mnt/pmem/f bs=4096 seek=2 count=1 conv=notrunc oflag=direct");
    CHECK(br->unowned == std::vector<BadRange>{{10004, 4}});
    CHECK(br->verdict.summary.find("/mnt/pmem/f") != std::string::npos);
    CHECK_FALSE(br->verdict.remedy.empty());
}

TEST_CASE("a file's damaged pages are rewritten in runs, a hostile name quoted", "[badblocks]")
{
    BadblockScan s = scanOf({{"/mnt/pmem/a;reboot", 4096, 512, 10000},
                             {"/mnt/pmem/a;reboot", 6144, 512, 10001},
                             {"/mnt/pmem/a;reboot", 3 << 20, 512, 10002}});
    auto br = judgeBadblocks(s);
    REQUIRE(br);
    REQUIRE(br->files.size() == 1);
    CHECK(br->files[0].rewrite ==
          "dd if=/dev/zero of='/mnt/pmem/a;reboot' bs=4096 seek=1 count=1 conv=notrunc "
          "oflag=direct && dd if=/dev/zero of='/mnt/pmem/a;reboot' bs=4096 seek=768 count=1 "
          "conv=notrunc oflag=direct");
}

TEST_CASE("a bus that cannot clear poison gets no rewrite, but the restore by copy", "[badblocks]")
{
    BadblockScan s = scanOf({{"/mnt/pmem/f", 8192, 2048, 10000}});
    s.bus = "ndbus0";
    s.clearsPoison = false;
    auto br = judgeBadblocks(s);
    REQUIRE(br);
    CHECK(br->verdict.code == "badblocks_in_files");
    REQUIRE(br->files.size() == 1);
    CHECK(br->files[0].rewrite.empty());
    CHECK_THAT(br->verdict.remedy,
               Catch::Contains("no clear_error in /sys/bus/nd/devices/ndbus0/commands") &&
                   Catch::Contains("cp BACKUP FILE.new && mv FILE.new FILE"));
}

TEST_CASE("bad sectors no file holds are metadata or free space", "[badblocks]")
{
    auto br = judgeBadblocks(scanOf({}));
    REQUIRE(br);
    CHECK(br->verdict.code == "badblocks_not_in_files");
    CHECK(br->files.empty());
    CHECK(br->unowned == std::vector<BadRange>{{10000, 8}});
    CHECK(br->verdict.remedy.empty());
}

TEST_CASE("the evidence says which method found the owners, free space by name", "[badblocks]")
{
    BadblockScan s = scanOf({{"/mnt/pmem/f", 8192, 2048, 10000}});
    s.method = "getfsmap";
    s.special = {{10004, 4, "free space"}};
    auto br = judgeBadblocks(s);
    REQUIRE(br);
    auto has = [&](const std::string &check, const std::string &text) {
        for (const auto &e : br->verdict.evidence)
            if (e.check == check && e.result.find(text) != std::string::npos)
                return true;
        return false;
    };
    CHECK(has("getfsmap", "GETFSMAP named the owners"));
    CHECK(has("no file", "sector 10004 count 4: free space"));
    CHECK_FALSE(has("no file", "metadata or free space"));

    s.method = "fiemap";
    s.fsmapNote = "GETFSMAP names no owner of 2048 bad byte(s)";
    s.special.clear();
    br = judgeBadblocks(s);
    CHECK(has("fiemap", "FIEMAP of 3 regular file(s) (GETFSMAP names no owner"));
    CHECK(has("no file", "sector 10004 count 4: metadata or free space"));
}

TEST_CASE("a walk stopped early or not run says so", "[badblocks]")
{
    BadblockScan s = scanOf({});
    s.stoppedEarly = "stopped after 5000 ms (12 files)";
    auto br = judgeBadblocks(s);
    REQUIRE(br);
    REQUIRE(br->verdict.warnings.size() == 1);
    CHECK(br->verdict.warnings[0].find("stopped after 5000 ms") != std::string::npos);
    CHECK(br->verdict.summary.find("no walked file") != std::string::npos);

    BadblockScan failed;
    failed.disk = "pmem0";
    failed.sectors = 1 << 21;
    failed.ranges = {{10000, 8}};
    failed.fail("cannot open /mnt/pmem: Permission denied");
    auto bf = judgeBadblocks(failed);
    REQUIRE(bf);
    CHECK(bf->verdict.code == "badblocks_not_mapped");
    CHECK(bf->verdict.summary.find("Permission denied") != std::string::npos);
}

TEST_CASE("ranges outside a partition are not its filesystem's", "[badblocks]")
{
    BadblockScan s = scanOf({});
    s.startSector = 20000; // the partition starts after the bad range
    CHECK_FALSE(judgeBadblocks(s));
    s.startSector = 10004; // half of it inside
    auto br = judgeBadblocks(s);
    REQUIRE(br);
    CHECK(br->badSectors == 4);
    CHECK(br->unowned == std::vector<BadRange>{{10004, 4}});
}

TEST_CASE("bad blocks under a mount stay a warning: DAX is still verified", "[badblocks]")
{
    Facts f = test::pmemFacts("ext4", "rw,dax=always");
    f.topology.namespaces[0].badblockCount = 8;
    f.mountLive["/mnt/pmem"].statx.observe();
    f.mountLive["/mnt/pmem"].statx.dax = true;
    f.badblockScans["/mnt/pmem"] = scanOf({{"/mnt/pmem/f", 8192, 4096, 10000}});
    Report r = evaluate(f);
    REQUIRE(r.mounts.size() == 1);
    REQUIRE(r.mounts[0].badblocks);
    CHECK(r.mounts[0].badblocks->verdict.code == "badblocks_in_files");
    CHECK(r.mounts[0].verdict.code == "dax_active");
    CHECK(r.exitCode == 0);
    CHECK(r.overall.code == "dax_verified");
}

namespace
{

std::string slurp(const std::string &path)
{
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

} // namespace

TEST_CASE("the captured guest: the judge names the file where xfs_io's fiemap puts the sectors",
          "[badblocks][fixture]")
{
    // tests/fixtures/badblocks-ext4: a QEMU NVDIMM guest (6.1), ext4 -o dax,
    // sectors at the file's byte 65536 and in the disk's last MiB injected.
    const std::string dir = FIXTURES_DIR "/badblocks-ext4";
    Facts facts;
    liveFactsFromJson(nlohmann::json::parse(slurp(dir + "/live.json")), facts);
    REQUIRE(facts.badblockScans.count("/mnt/pmem"));
    const BadblockScan &scan = facts.badblockScans.at("/mnt/pmem");
    std::smatch m;
    std::string fiemap = slurp(dir + "/_vm/badblocks-fiemap.txt");
    REQUIRE(std::regex_search(fiemap, m, std::regex(R"(\n\s*0: \[0\.\.\d+\]:\s+(\d+)\.\.)")));
    const std::uint64_t sector = std::stoull(m[1]) + 65536 / 512;

    auto br = judgeBadblocks(scan);
    REQUIRE(br);
    CHECK(br->verdict.code == "badblocks_in_files");
    REQUIRE(br->files.size() == 1);
    CHECK(br->files[0].path == "/mnt/pmem/data/damaged");
    REQUIRE(br->files[0].pieces.size() == 1);
    CHECK(br->files[0].pieces[0].offset == 65536);
    CHECK(br->files[0].pieces[0].length == 4096);
    CHECK(br->files[0].pieces[0].sector == sector);
    // QEMU's NVDIMM offers no Clear Error DSM: no rewrite is promised.
    CHECK_FALSE(scan.clearsPoison);
    CHECK(br->files[0].rewrite.empty());
    REQUIRE(br->unowned.size() == 1);
    CHECK(br->unowned[0].count == 8);
}

namespace
{

// The fixture's scan and the bad bytes of its (whole-disk) device.
BadblockScan capturedScan(const std::string &dir)
{
    Facts facts;
    liveFactsFromJson(nlohmann::json::parse(slurp(dir + "/live.json")), facts);
    REQUIRE(facts.badblockScans.count("/mnt/pmem"));
    return facts.badblockScans.at("/mnt/pmem");
}

std::vector<DeviceBadBytes> badBytesOf(const BadblockScan &s)
{
    BadblockDevice d;
    d.startSector = s.startSector;
    d.sectors = s.sectors;
    d.ranges = s.ranges;
    return badBytesOnDevice(d);
}

std::uint64_t injected(const std::string &dir, const std::string &key)
{
    std::smatch m;
    std::string text = slurp(dir + "/_vm/badblocks-injected.txt");
    REQUIRE(std::regex_search(text, m, std::regex(key + "=(\\d+)")));
    return std::stoull(m[1]);
}

} // namespace

TEST_CASE("the captured guests' GETFSMAP records: XFS with rmapbt names the file's inode",
          "[badblocks][fixture][fsmap]")
{
    // tests/fixtures/badblocks-xfs: XFS -m rmapbt=1, the file's page 16 and
    // the disk's last MiB injected; xfs_io's fsmap and stat in the same guest.
    const std::string dir = FIXTURES_DIR "/badblocks-xfs";
    BadblockScan scan = capturedScan(dir);
    CHECK(scan.method == "getfsmap");
    FsmapOwners o = ownersOfBadBytes(scan.fsmap, badBytesOf(scan));
    CHECK(o.unknownBytes == 0);
    const std::uint64_t ino = std::stoull(slurp(dir + "/_vm/badblocks-inode.txt"));
    REQUIRE(o.inodes.count(ino));
    REQUIRE(o.inodes[ino].size() == 1);
    CHECK(o.inodes[ino][0].offset == 65536);
    CHECK(o.inodes[ino][0].length == 4096);
    CHECK(o.inodes[ino][0].sector == injected(dir, "sector"));
    CHECK(o.special == std::vector<SpecialRange>{{injected(dir, "free"), 8, "free space"}});
    auto br = judgeBadblocks(scan);
    REQUIRE(br);
    REQUIRE(br->files.size() == 1);
    CHECK(br->files[0].path == "/mnt/pmem/data/damaged");
}

TEST_CASE("the captured guests' GETFSMAP records: ext4 names free space, not file data",
          "[badblocks][fixture][fsmap]")
{
    const std::string dir = FIXTURES_DIR "/badblocks-ext4";
    BadblockScan scan = capturedScan(dir);
    CHECK(scan.method == "fiemap");
    FsmapOwners o = ownersOfBadBytes(scan.fsmap, badBytesOf(scan));
    CHECK(o.unknownBytes == 4096); // the file's page: FMR_OWN_UNKNOWN
    CHECK(o.inodes.empty());
    CHECK(o.special == std::vector<SpecialRange>{{injected(dir, "free"), 8, "free space"}});
}
