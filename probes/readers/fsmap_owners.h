#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "probes/readers/topology.h"

namespace daxprobe
{

// One record of FS_IOC_GETFSMAP (linux/fsmap.h struct fsmap), in bytes on
// the filesystem's device.
struct FsmapRecord {
    std::uint64_t physical = 0;
    std::uint64_t length = 0;
    std::uint64_t owner = 0;  // an inode number, or a special owner (FMR_OWN_*)
    std::uint64_t offset = 0; // in the owner's file (inode owners' data)
    std::uint32_t flags = 0;  // FMR_OF_*
    bool operator==(const FsmapRecord &) const = default;
};

// A bad range as bytes on the filesystem's device, [begin, end), and its
// first sector on the disk.
struct DeviceBadBytes {
    std::uint64_t begin = 0, end = 0, firstSector = 0;
};

// A piece of a file's data on bad bytes, as GETFSMAP places it.
struct InodePiece {
    std::uint64_t offset = 0, length = 0, sector = 0;
};

// Bad sectors GETFSMAP gives to no file: free space or metadata, named.
struct SpecialRange {
    std::uint64_t sector = 0, count = 0;
    std::string owner; // "free space", "log", "inodes", ...
    bool operator==(const SpecialRange &) const = default;
};

// What GETFSMAP says of the bad bytes.
struct FsmapOwners {
    std::map<std::uint64_t, std::vector<InodePiece>> inodes; // file data, by inode
    std::vector<SpecialRange> special;
    // Bad bytes GETFSMAP names no owner of: FMR_OWN_UNKNOWN (ext4 in use,
    // XFS without rmapbt) or no record at all. Zero: it named every owner.
    std::uint64_t unknownBytes = 0;
};

// Pure: the owners of `bad` in `records` (any order, possibly overlapping
// the ranges only in part).
FsmapOwners ownersOfBadBytes(const std::vector<FsmapRecord> &records,
                             const std::vector<DeviceBadBytes> &bad);

// The name of a special owner (FMR_OF_SPECIAL_OWNER) or of an inode's
// metadata (FMR_OF_ATTR_FORK, FMR_OF_EXTENT_MAP).
std::string specialOwnerName(const FsmapRecord &r);

} // namespace daxprobe
