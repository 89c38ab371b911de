#include "probes/readers/bad_owners.h"

#include <algorithm>
#include <set>
#include <sys/sysmacros.h>
#include <tuple>

#include <fmt/format.h>

#include "probes/readers/fsmap.h"
#include "probes/readers/inode_paths.h"

namespace daxprobe
{

namespace
{

// Records read before the bad ranges end: an extent of each file before
// them, a free extent between, in a real filesystem far fewer.
constexpr std::size_t kMaxFsmapRecords = 1000000;

// The damaged pieces of the owner inodes, named by a walk; inodes the walk
// did not find are said in stoppedEarly.
void nameInodes(const std::string &mountPoint, const BadblockDevice &dev, const WalkLimits &limits,
                const FsmapOwners &owners, BadblockScan &scan)
{
    std::set<std::uint64_t> inodes;
    for (const auto &[ino, pieces] : owners.inodes)
        inodes.insert(ino);
    auto found = findInodePaths(mountPoint, makedev(dev.major, dev.minor), dev.name, inodes,
                                {limits.maxFiles, limits.maxTime});
    if (!found) {
        scan.fail(found.error().describe());
        return;
    }
    scan.filesScanned = found->files;
    std::vector<std::uint64_t> lost;
    for (const auto &[ino, pieces] : owners.inodes) {
        auto it = found->paths.find(ino);
        if (it == found->paths.end()) {
            lost.push_back(ino);
            continue;
        }
        for (const auto &p : pieces)
            scan.extents.push_back({it->second, p.offset, p.length, p.sector});
    }
    if (!lost.empty())
        scan.stoppedEarly =
            fmt::format("no path found for inode(s) {}{}", fmt::join(lost, ", "),
                        found->stoppedEarly.empty() ? std::string()
                                                    : " (the walk " + found->stoppedEarly + ")");
    std::sort(scan.extents.begin(), scan.extents.end(), [](const auto &a, const auto &b) {
        return std::tie(a.path, a.offset) < std::tie(b.path, b.offset);
    });
    scan.observe();
}

} // namespace

BadblockScan findBadblockOwners(const std::string &mountPoint, const BadblockDevice &dev,
                                const WalkLimits &limits)
{
    auto records = readFsmap(mountPoint, badBytesOnDevice(dev), kMaxFsmapRecords);
    FsmapOwners owners;
    std::string note;
    if (!records) {
        note = records.error().describe();
    } else {
        owners = ownersOfBadBytes(*records, badBytesOnDevice(dev));
        if (owners.unknownBytes)
            note = fmt::format("GETFSMAP names no owner of {} bad byte(s) (FMR_OWN_UNKNOWN: "
                               "no reverse map of file data)",
                               owners.unknownBytes);
    }
    BadblockScan scan;
    if (note.empty()) {
        scan = scanOfDevice(dev);
        scan.method = "getfsmap";
        nameInodes(mountPoint, dev, limits, owners, scan);
    } else {
        scan = scanBadblocks(mountPoint, dev, limits);
        scan.method = "fiemap";
        scan.fsmapNote = std::move(note);
    }
    scan.special = std::move(owners.special);
    if (records)
        scan.fsmap = std::move(*records);
    return scan;
}

} // namespace daxprobe
