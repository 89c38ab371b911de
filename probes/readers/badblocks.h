#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/evidence_state.h"
#include "base/result.h"
#include "base/root.h"
#include "probes/readers/fsmap_owners.h"
#include "probes/readers/topology.h"

namespace daxprobe
{

// A `badblocks` file (a disk's: sectors from the start of the whole disk,
// not of a partition; a region's: from the region's start):
// "SECTOR COUNT" per line (block/badblocks.c badblocks_show); anything else
// is an error naming the line.
Result<std::vector<BadRange>> parseBadblocks(std::string_view text);

// The parts of `ranges` inside the partition [start, start + sectors).
std::vector<BadRange> clipToPartition(const std::vector<BadRange> &ranges, std::uint64_t start,
                                      std::uint64_t sectors);

// A block device that may hold a filesystem, on a pmem disk with bad blocks:
// the disk itself or one of its partitions.
struct BadblockDevice {
    std::string disk;              // pmem0: whose badblocks file the ranges are from
    std::string name;              // pmem0 or pmem0p1
    unsigned major = 0, minor = 0; // to match a mount
    std::uint64_t startSector = 0; // where the partition starts on the disk (0: the disk)
    std::uint64_t sectors = 0;     // its size
    std::vector<BadRange> ranges;  // the disk's, all of them
    std::string bus;               // the nd bus of its namespace's region
    bool clearsPoison = true;      // a write through the fs can clear them (clearsPoison())
};

// Whether the kernel can clear poison on a write (nvdimm_clear_poison): a bus
// without a control function (virtio-pmem) just drops the sectors from the
// list; an ACPI NFIT bus needs the Clear Error DSM ("clear_error" in its
// `commands`), which QEMU's NVDIMM does not offer: there a write fails as a
// read does.
bool clearsPoison(const std::string &provider, const std::string &commands);

// Every namespace disk with a non-zero bad-block count, and its partitions.
std::vector<BadblockDevice> readBadblockDevices(const Root &root, const Topology &topology);

// `dev`'s bad ranges inside it, as bytes on it.
std::vector<DeviceBadBytes> badBytesOnDevice(const BadblockDevice &dev);

// A piece of a file on bad sectors.
struct DamagedExtent {
    std::string path;         // absolute: the mount point joined with the path in the fs
    std::uint64_t offset = 0; // byte offset in the file
    std::uint64_t length = 0; // bytes
    std::uint64_t sector = 0; // first bad sector of the piece, on the disk
    bool operator==(const DamagedExtent &) const = default;
};

// The files a mount's bad sectors fall in (bad_owners.h): GETFSMAP's owners
// where it names them all, else a FIEMAP walk (extent_walk.h). Observed when
// the method ran (complete or not), Failed when it could not start.
struct BadblockScan : EvidenceOutcome {
    std::string disk;
    std::uint64_t startSector = 0;
    std::uint64_t sectors = 0;
    std::vector<BadRange> ranges;       // the disk's
    std::vector<DamagedExtent> extents; // sorted by path, then offset
    std::uint64_t filesScanned = 0;
    std::string stoppedEarly; // which bound stopped the walk; empty when it saw every file
    std::string bus;
    bool clearsPoison = true;
    std::string method;                // which found the files: "getfsmap" or "fiemap"
    std::string fsmapNote;             // why not GETFSMAP (method "fiemap")
    std::vector<SpecialRange> special; // bad sectors GETFSMAP gives to free space or metadata
    std::vector<FsmapRecord> fsmap;    // GETFSMAP's records over the bad ranges
};

// A scan of `dev` with nothing found yet: its disk, extent, ranges and bus.
BadblockScan scanOfDevice(const BadblockDevice &dev);

} // namespace daxprobe
