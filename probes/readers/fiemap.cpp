#include "probes/readers/fiemap.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <linux/fs.h>
#include <sys/ioctl.h>

namespace daxprobe
{

namespace
{

constexpr std::uint32_t kExtentsPerCall = 64;

} // namespace

void forEachExtent(int fd, const std::function<bool(const fiemap_extent &)> &visit)
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
            if (!visit(e) || (e.fe_flags & FIEMAP_EXTENT_LAST))
                return;
        }
        const fiemap_extent &last = map->fm_extents[map->fm_mapped_extents - 1];
        if (last.fe_logical + last.fe_length <= start)
            return; // no progress: the filesystem answered oddly
        start = last.fe_logical + last.fe_length;
    }
}

} // namespace daxprobe
