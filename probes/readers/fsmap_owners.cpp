#include "probes/readers/fsmap_owners.h"

#include <algorithm>
#include <linux/fsmap.h>

#include <fmt/format.h>

namespace daxprobe
{

namespace
{

// The special owners XFS (fs/xfs/libxfs/xfs_fs.h XFS_FMR_OWN_*) and ext4
// (fs/ext4/fsmap.h EXT4_FMR_OWN_*) report; ext4 shares XFS's codes where
// they mean the same.
struct Named {
    std::uint64_t owner;
    const char *name;
};
constexpr Named kOwners[] = {
    {FMR_OWN_FREE, "free space"},
    {FMR_OWN_UNKNOWN, "unknown owner"},
    {FMR_OWN_METADATA, "metadata"},
    {FMR_OWNER('X', 1), "static fs metadata"},
    {FMR_OWNER('X', 2), "journal (log)"},
    {FMR_OWNER('X', 3), "per-AG metadata"},
    {FMR_OWNER('X', 4), "inode btree"},
    {FMR_OWNER('X', 5), "inodes"},
    {FMR_OWNER('X', 6), "refcount btree"},
    {FMR_OWNER('X', 7), "copy-on-write staging"},
    {FMR_OWNER('X', 8), "known bad blocks"},
    {FMR_OWNER('f', 1), "group descriptors"},
    {FMR_OWNER('f', 2), "reserved group descriptors"},
    {FMR_OWNER('f', 3), "block bitmap"},
    {FMR_OWNER('f', 4), "inode bitmap"},
};

bool isFileData(const FsmapRecord &r)
{
    return !(r.flags & (FMR_OF_SPECIAL_OWNER | FMR_OF_ATTR_FORK | FMR_OF_EXTENT_MAP));
}

bool isUnknown(const FsmapRecord &r)
{
    return (r.flags & FMR_OF_SPECIAL_OWNER) && r.owner == FMR_OWN_UNKNOWN;
}

// Adds [sector, sector+count) of `owner` to `out`, joined to the last
// range when it continues it.
void addSpecial(std::vector<SpecialRange> &out, std::uint64_t sector, std::uint64_t count,
                const std::string &owner)
{
    if (!out.empty() && out.back().owner == owner && out.back().sector + out.back().count == sector)
        out.back().count += count;
    else
        out.push_back({sector, count, owner});
}

} // namespace

std::string specialOwnerName(const FsmapRecord &r)
{
    if (r.flags & FMR_OF_ATTR_FORK)
        return fmt::format("extended attributes of inode {}", r.owner);
    if (r.flags & FMR_OF_EXTENT_MAP)
        return fmt::format("extent map of inode {}", r.owner);
    for (const auto &n : kOwners)
        if (n.owner == r.owner)
            return n.name;
    return fmt::format("special owner {:#x}", r.owner);
}

FsmapOwners ownersOfBadBytes(const std::vector<FsmapRecord> &records,
                             const std::vector<DeviceBadBytes> &bad)
{
    std::vector<FsmapRecord> sorted = records;
    std::sort(sorted.begin(), sorted.end(),
              [](const auto &a, const auto &b) { return a.physical < b.physical; });
    FsmapOwners out;
    for (const auto &b : bad) {
        std::uint64_t known = 0;
        for (const auto &r : sorted) {
            std::uint64_t o0 = std::max(r.physical, b.begin),
                          o1 = std::min(r.physical + r.length, b.end);
            if (o0 >= o1 || isUnknown(r))
                continue;
            known += o1 - o0;
            std::uint64_t sector = b.firstSector + (o0 - b.begin) / 512;
            if (isFileData(r))
                out.inodes[r.owner].push_back({r.offset + (o0 - r.physical), o1 - o0, sector});
            else
                addSpecial(out.special, sector, (o1 - o0 + 511) / 512, specialOwnerName(r));
        }
        out.unknownBytes += (b.end - b.begin) - std::min(known, b.end - b.begin);
    }
    return out;
}

} // namespace daxprobe
