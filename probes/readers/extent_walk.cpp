#include "probes/readers/extent_walk.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <dirent.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <set>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <fmt/format.h>

#include "base/beneath.h"
#include "base/unique_fd.h"

namespace daxprobe
{

namespace
{

constexpr std::uint32_t kExtentsPerCall = 64;
// Extents whose physical address is no place on the device (yet).
constexpr std::uint32_t kNoPlace = FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC |
                                   FIEMAP_EXTENT_DATA_INLINE | FIEMAP_EXTENT_DATA_TAIL |
                                   FIEMAP_EXTENT_ENCODED;

// A bad range as bytes on the filesystem's device, [begin, end).
struct ByteRange {
    std::uint64_t begin, end, firstSector;
};

std::vector<ByteRange> rangesOnDevice(const BadblockDevice &dev)
{
    std::vector<ByteRange> out;
    for (const auto &r : clipToPartition(dev.ranges, dev.startSector, dev.sectors))
        out.push_back({(r.sector - dev.startSector) * kSectorSize,
                       (r.sector + r.count - dev.startSector) * kSectorSize, r.sector});
    return out;
}

class Walk
{
  public:
    Walk(const std::string &mountPoint, const BadblockDevice &dev, const WalkLimits &limits,
         BadblockScan &scan)
        : mountPoint_(mountPoint), bad_(rangesOnDevice(dev)), limits_(limits), scan_(scan),
          deadline_(std::chrono::steady_clock::now() + limits.maxTime)
    {
    }

    void run(int rootFd, dev_t device);

  private:
    void walkDir(int dirFd, const std::string &rel, std::deque<std::string> &dirs);
    void mapFile(int fd, const std::string &rel);
    void hit(const fiemap_extent &e, const std::string &rel);
    bool bounded();

    std::string mountPoint_;
    std::vector<ByteRange> bad_;
    WalkLimits limits_;
    BadblockScan &scan_;
    std::chrono::steady_clock::time_point deadline_;
    dev_t device_ = 0;
    int rootFd_ = -1;
    std::set<ino_t> linked_; // files with more than one name: mapped once
};

bool Walk::bounded()
{
    if (!scan_.stoppedEarly.empty())
        return true;
    if (scan_.filesScanned >= limits_.maxFiles)
        scan_.stoppedEarly = fmt::format("stopped after {} files", scan_.filesScanned);
    else if (std::chrono::steady_clock::now() >= deadline_)
        scan_.stoppedEarly = fmt::format("stopped after {} ms ({} files)", limits_.maxTime.count(),
                                         scan_.filesScanned);
    else if (scan_.extents.size() >= limits_.maxExtents)
        scan_.stoppedEarly = fmt::format("stopped at {} damaged pieces", scan_.extents.size());
    return !scan_.stoppedEarly.empty();
}

void Walk::run(int rootFd, dev_t device)
{
    rootFd_ = rootFd;
    device_ = device;
    std::deque<std::string> dirs{"."};
    while (!dirs.empty() && !bounded()) {
        std::string rel = std::move(dirs.front());
        dirs.pop_front();
        auto fd = openBeneath(rootFd_, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK);
        struct stat st {
        };
        if (!fd || ::fstat(fd->get(), &st) != 0 || st.st_dev != device_)
            continue; // gone, swapped for a link, or another mount now
        walkDir(fd->release(), rel, dirs);
    }
    std::sort(scan_.extents.begin(), scan_.extents.end(), [](const auto &a, const auto &b) {
        return std::tie(a.path, a.offset) < std::tie(b.path, b.offset);
    });
}

// Takes `dirFd`. Regular files are mapped now, directories queued.
void Walk::walkDir(int dirFd, const std::string &rel, std::deque<std::string> &dirs)
{
    DIR *d = ::fdopendir(dirFd);
    if (!d) {
        ::close(dirFd);
        return;
    }
    while (dirent *e = ::readdir(d)) {
        std::string name = e->d_name;
        if (name == "." || name == ".." || bounded())
            continue;
        std::string child = rel == "." ? name : rel + "/" + name;
        struct stat st {
        };
        if (::fstatat(dirFd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_dev != device_)
            continue;
        if (S_ISDIR(st.st_mode)) {
            dirs.push_back(std::move(child));
        } else if (S_ISREG(st.st_mode)) {
            if (st.st_nlink > 1 && !linked_.insert(st.st_ino).second)
                continue;
            UniqueFD fd(::openat(dirFd, e->d_name,
                                 O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
            struct stat now {
            };
            // Only the file stat'ed above: a FIFO or device swapped in is not read.
            if (fd && ::fstat(fd.get(), &now) == 0 && S_ISREG(now.st_mode) &&
                now.st_ino == st.st_ino && now.st_dev == device_) {
                ++scan_.filesScanned;
                mapFile(fd.get(), child);
            }
        }
    }
    ::closedir(d);
}

void Walk::mapFile(int fd, const std::string &rel)
{
    alignas(fiemap) unsigned char buf[sizeof(fiemap) + kExtentsPerCall * sizeof(fiemap_extent)];
    auto *map = reinterpret_cast<fiemap *>(buf);
    std::uint64_t start = 0;
    for (;;) {
        std::fill(std::begin(buf), std::end(buf), 0);
        map->fm_start = start;
        map->fm_length = FIEMAP_MAX_OFFSET - start;
        map->fm_extent_count = kExtentsPerCall;
        if (::ioctl(fd, FS_IOC_FIEMAP, map) != 0 || map->fm_mapped_extents == 0)
            return;
        for (std::uint32_t i = 0; i < map->fm_mapped_extents; ++i) {
            const fiemap_extent &e = map->fm_extents[i];
            if (!(e.fe_flags & kNoPlace))
                hit(e, rel);
            if (e.fe_flags & FIEMAP_EXTENT_LAST)
                return;
        }
        const fiemap_extent &last = map->fm_extents[map->fm_mapped_extents - 1];
        if (last.fe_logical + last.fe_length <= start)
            return; // no progress: the filesystem answered oddly
        start = last.fe_logical + last.fe_length;
    }
}

void Walk::hit(const fiemap_extent &e, const std::string &rel)
{
    const std::uint64_t p0 = e.fe_physical, p1 = e.fe_physical + e.fe_length;
    for (const auto &b : bad_) {
        std::uint64_t o0 = std::max(p0, b.begin), o1 = std::min(p1, b.end);
        if (o0 >= o1)
            continue;
        std::string path = mountPoint_ == "/" ? "/" + rel : mountPoint_ + "/" + rel;
        scan_.extents.push_back({std::move(path), e.fe_logical + (o0 - p0), o1 - o0,
                                 b.firstSector + (o0 - b.begin) / kSectorSize});
    }
}

} // namespace

BadblockScan scanBadblocks(const std::string &mountPoint, const BadblockDevice &dev,
                           const WalkLimits &limits)
{
    BadblockScan scan;
    scan.disk = dev.disk;
    scan.startSector = dev.startSector;
    scan.sectors = dev.sectors;
    scan.ranges = dev.ranges;
    scan.bus = dev.bus;
    scan.clearsPoison = dev.clearsPoison;
    UniqueFD root(
        ::open(mountPoint.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    struct stat st {
    };
    if (!root || ::fstat(root.get(), &st) != 0) {
        scan.fail(fmt::format("cannot open {}: {}", mountPoint, std::strerror(errno)));
        return scan;
    }
    if (st.st_dev != makedev(dev.major, dev.minor)) {
        scan.fail(fmt::format("{} is not on {} any more", mountPoint, dev.name));
        return scan;
    }
    Walk(mountPoint, dev, limits, scan).run(root.get(), st.st_dev);
    scan.observe();
    return scan;
}

} // namespace daxprobe
