// GETFSMAP's records turned into the owners of bad bytes: the cases a guest
// shows (tests/fixtures/badblocks-xfs: XFS with rmapbt; badblocks-ext4:
// "unknown" for file data), and the edges a guest does not.
#include <catch2/catch.hpp>

#include <linux/fsmap.h>

#include "probes/readers/fsmap_owners.h"

using namespace daxprobe;

namespace
{

constexpr std::uint32_t kSpecial = FMR_OF_SPECIAL_OWNER;

} // namespace

TEST_CASE("an inode's record gives the file offset of the bad bytes", "[fsmap]")
{
    // inode 131's bytes 0-1 MiB at device byte 8 MiB; bad: device 8 MiB + 64 KiB, 4 KiB
    std::vector<FsmapRecord> recs = {{8 << 20, 1 << 20, 131, 0, 0}};
    auto o = ownersOfBadBytes(recs, {{(8 << 20) + 65536, (8 << 20) + 69632, 16512}});
    CHECK(o.unknownBytes == 0);
    CHECK(o.special.empty());
    REQUIRE(o.inodes.count(131));
    REQUIRE(o.inodes[131].size() == 1);
    CHECK(o.inodes[131][0].offset == 65536);
    CHECK(o.inodes[131][0].length == 4096);
    CHECK(o.inodes[131][0].sector == 16512);
}

TEST_CASE("a bad range over two owners is split, free space named", "[fsmap]")
{
    std::vector<FsmapRecord> recs = {{4096, 4096, FMR_OWN_FREE, 0, kSpecial},
                                     {0, 4096, 12, 8192, 0}};
    auto o = ownersOfBadBytes(recs, {{2048, 6144, 100}});
    CHECK(o.unknownBytes == 0);
    REQUIRE(o.inodes[12].size() == 1);
    CHECK(o.inodes[12][0].offset == 8192 + 2048);
    CHECK(o.inodes[12][0].length == 2048);
    CHECK(o.inodes[12][0].sector == 100);
    CHECK(o.special == std::vector<SpecialRange>{{104, 4, "free space"}});
}

TEST_CASE("unknown owners and gaps leave bytes without an owner", "[fsmap]")
{
    // ext4: data in use is FMR_OWN_UNKNOWN; nothing at all covers 8192-12288
    std::vector<FsmapRecord> recs = {{0, 8192, FMR_OWN_UNKNOWN, 0, kSpecial}};
    auto o = ownersOfBadBytes(recs, {{4096, 12288, 8}});
    CHECK(o.unknownBytes == 8192);
    CHECK(o.inodes.empty());
    CHECK(o.special.empty());
}

TEST_CASE("an inode's metadata is not its data", "[fsmap]")
{
    std::vector<FsmapRecord> recs = {{0, 4096, 131, 0, FMR_OF_EXTENT_MAP},
                                     {4096, 4096, FMR_OWNER('X', 2), 0, kSpecial}};
    auto o = ownersOfBadBytes(recs, {{0, 8192, 0}});
    CHECK(o.inodes.empty());
    CHECK(o.special ==
          std::vector<SpecialRange>{{0, 8, "extent map of inode 131"}, {8, 8, "journal (log)"}});
}
