// The bad-block walk on the build machine's own filesystem: FIEMAP answers
// there as on pmem, so the mapping and the walk's refusals (links out of the
// tree, FIFOs, bounds) are tested against filefrag's answer for the same file.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <linux/magic.h>
#include <regex>
#include <string>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "probes/readers/bad_owners.h"
#include "probes/readers/extent_walk.h"

using namespace daxprobe;
namespace fs = std::filesystem;

namespace
{

struct TempDir {
    fs::path dir;
    TempDir()
    {
        char tmpl[] = "/var/tmp/daxprobe-walk-XXXXXX";
        dir = ::mkdtemp(tmpl);
    }
    ~TempDir() { fs::remove_all(dir); }
};

void writeSynced(const fs::path &p, std::size_t bytes)
{
    {
        std::ofstream(p, std::ios::binary) << std::string(bytes, 'x');
    }
    // Allocated, not delayed: FIEMAP then gives a place on the device.
    REQUIRE(std::system(("sync " + p.string()).c_str()) == 0);
}

// filefrag's first physical sector of `p` (the kernel's answer, in 512-byte units).
std::uint64_t firstSector(const fs::path &p)
{
    std::string cmd = "filefrag -v -b512 " + p.string() + " 2>/dev/null";
    FILE *f = ::popen(cmd.c_str(), "r");
    REQUIRE(f);
    std::string out;
    char buf[512];
    while (std::fgets(buf, sizeof buf, f))
        out += buf;
    REQUIRE(::pclose(f) == 0);
    std::smatch m;
    REQUIRE(std::regex_search(out, m, std::regex(R"(\n\s*0:\s*0\.\.\s*\d+:\s*(\d+)\.\.)")));
    return std::stoull(m[1]);
}

BadblockDevice deviceOf(const fs::path &dir, std::vector<BadRange> ranges)
{
    struct stat st {
    };
    REQUIRE(::stat(dir.c_str(), &st) == 0);
    return {"disk", "disk",      ::major(st.st_dev), ::minor(st.st_dev),
            0,      ~0ULL >> 10, std::move(ranges),  "",
            true};
}

} // namespace

TEST_CASE("the walk names the file and offset filefrag places on a bad sector", "[badblocks]")
{
    TempDir t;
    fs::create_directories(t.dir / "sub");
    writeSynced(t.dir / "sub" / "data", 64 * 1024);
    writeSynced(t.dir / "other", 8 * 1024);
    std::uint64_t s = firstSector(t.dir / "sub" / "data");
    // A FIFO must not block the walk, a link must not lead out, a second
    // name of the same file must not count twice.
    REQUIRE(::mkfifo((t.dir / "fifo").c_str(), 0600) == 0);
    fs::create_symlink("/etc", t.dir / "etc-link");
    fs::create_hard_link(t.dir / "sub" / "data", t.dir / "hardlink");

    BadblockScan scan = scanBadblocks(t.dir, deviceOf(t.dir, {{s + 16, 8}}));
    REQUIRE(scan.observed());
    CHECK(scan.stoppedEarly.empty());
    CHECK(scan.filesScanned == 2);
    REQUIRE(scan.extents.size() == 1);
    const DamagedExtent &e = scan.extents[0];
    CHECK((e.path == (t.dir / "sub" / "data").string() || e.path == (t.dir / "hardlink").string()));
    CHECK(e.offset == 16 * 512);
    CHECK(e.length == 8 * 512);
    CHECK(e.sector == s + 16);

    SECTION("a partition's start moves the ranges")
    {
        BadblockDevice part = deviceOf(t.dir, {{s + 16 + 2048, 8}});
        part.startSector = 2048;
        BadblockScan p = scanBadblocks(t.dir, part);
        REQUIRE(p.extents.size() == 1);
        CHECK(p.extents[0].offset == 16 * 512);
        CHECK(p.extents[0].sector == s + 16 + 2048);
    }
    SECTION("the file bound stops the walk and says so")
    {
        BadblockScan p = scanBadblocks(t.dir, deviceOf(t.dir, {{s + 16, 8}}), {.maxFiles = 1});
        CHECK(p.filesScanned == 1);
        CHECK(p.stoppedEarly == "stopped after 1 files");
    }
}

TEST_CASE("the walk refuses a start that is not the device's", "[badblocks]")
{
    TempDir t;
    BadblockDevice d = deviceOf(t.dir, {{0, 8}});
    d.minor += 1;
    BadblockScan scan = scanBadblocks(t.dir, d);
    CHECK(scan.failed());
    fs::create_symlink("/etc", t.dir / "link");
    CHECK(scanBadblocks(t.dir / "link", deviceOf(t.dir, {{0, 8}})).failed());
}

TEST_CASE("ext4's GETFSMAP names no file: the FIEMAP walk finds it, and says so", "[badblocks]")
{
    TempDir t;
    struct statfs sf {
    };
    REQUIRE(::statfs(t.dir.c_str(), &sf) == 0);
    INFO("this test needs /var/tmp on ext4 (Debian's default)");
    REQUIRE(sf.f_type == EXT4_SUPER_MAGIC);
    writeSynced(t.dir / "data", 64 * 1024);
    std::uint64_t s = firstSector(t.dir / "data");
    BadblockScan scan = findBadblockOwners(t.dir, deviceOf(t.dir, {{s + 16, 8}}));
    REQUIRE(scan.observed());
    CHECK(scan.method == "fiemap");
    CHECK_THAT(scan.fsmapNote, Catch::Contains("FMR_OWN_UNKNOWN"));
    CHECK(!scan.fsmap.empty()); // the kernel answered, with an unknown owner
    REQUIRE(scan.extents.size() == 1);
    CHECK(scan.extents[0].path == (t.dir / "data").string());
    CHECK(scan.extents[0].offset == 16 * 512);
}
