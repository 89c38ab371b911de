#include "probes/readers/extent_walk.h"

#include <algorithm>
#include <sys/sysmacros.h>
#include <tuple>

#include <fmt/format.h>

#include "probes/readers/fiemap.h"
#include "probes/readers/file_walk.h"

namespace daxprobe
{

namespace
{

// Extents whose physical address is no place on the device (yet).
constexpr std::uint32_t kNoPlace = FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC |
                                   FIEMAP_EXTENT_DATA_INLINE | FIEMAP_EXTENT_DATA_TAIL |
                                   FIEMAP_EXTENT_ENCODED;

// The damaged pieces of each file the shared walk (file_walk.h) hands over.
class ExtentMap
{
  public:
    ExtentMap(const std::string &mountPoint, const BadblockDevice &dev, BadblockScan &scan)
        : mountPoint_(mountPoint), bad_(badBytesOnDevice(dev)), scan_(scan)
    {
    }

    void mapFile(int fd, const std::string &rel);

  private:
    void hit(const fiemap_extent &e, const std::string &rel);

    std::string mountPoint_;
    std::vector<DeviceBadBytes> bad_;
    BadblockScan &scan_;
};

void ExtentMap::mapFile(int fd, const std::string &rel)
{
    forEachExtent(fd, [&](const fiemap_extent &e) {
        if (!(e.fe_flags & kNoPlace))
            hit(e, rel);
        return true;
    });
}

void ExtentMap::hit(const fiemap_extent &e, const std::string &rel)
{
    const std::uint64_t p0 = e.fe_physical, p1 = e.fe_physical + e.fe_length;
    for (const auto &b : bad_) {
        std::uint64_t o0 = std::max(p0, b.begin), o1 = std::min(p1, b.end);
        if (o0 >= o1)
            continue;
        scan_.extents.push_back({pathInMount(mountPoint_, rel), e.fe_logical + (o0 - p0), o1 - o0,
                                 b.firstSector + (o0 - b.begin) / kSectorSize});
    }
}

} // namespace

BadblockScan scanBadblocks(const std::string &mountPoint, const BadblockDevice &dev,
                           const WalkLimits &limits)
{
    BadblockScan scan = scanOfDevice(dev);
    ExtentMap map(mountPoint, dev, scan);
    auto walked = walkRegularFiles(
        mountPoint, makedev(dev.major, dev.minor), dev.name, {limits.maxFiles, limits.maxTime},
        [&](int fd, const std::string &rel) { map.mapFile(fd, rel); },
        [&]() {
            return scan.extents.size() >= limits.maxExtents
                       ? fmt::format("stopped at {} damaged pieces", scan.extents.size())
                       : std::string();
        });
    if (!walked) {
        scan.fail(walked.error().describe());
        return scan;
    }
    scan.filesScanned = walked->files;
    scan.stoppedEarly = std::move(walked->stoppedEarly);
    std::sort(scan.extents.begin(), scan.extents.end(), [](const auto &a, const auto &b) {
        return std::tie(a.path, a.offset) < std::tie(b.path, b.offset);
    });
    scan.observe();
    return scan;
}

} // namespace daxprobe
