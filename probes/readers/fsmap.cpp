#include "probes/readers/fsmap.h"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/fsmap.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/unique_fd.h"

namespace daxprobe
{

namespace
{

constexpr std::uint32_t kRecordsPerCall = 128;

// The kernel names a device as new_encode_dev(): glibc's dev_t layout, cut to 32 bits.
std::uint32_t encodedDevice(dev_t dev)
{
    return static_cast<std::uint32_t>(dev);
}

bool overlaps(const fsmap &r, const std::vector<DeviceBadBytes> &bad)
{
    for (const auto &b : bad)
        if (r.fmr_physical < b.end && r.fmr_physical + r.fmr_length > b.begin)
            return true;
    return false;
}

} // namespace

Result<std::vector<FsmapRecord>> readFsmap(const std::string &mountPoint,
                                           const std::vector<DeviceBadBytes> &bad,
                                           std::size_t maxScanned)
{
    std::vector<FsmapRecord> out;
    std::uint64_t end = 0;
    for (const auto &b : bad)
        end = std::max(end, b.end);
    if (end == 0)
        return out;
    UniqueFD fd(::open(mountPoint.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    struct stat st {
    };
    if (!fd || ::fstat(fd.get(), &st) != 0)
        return failf(errno, "GETFSMAP: open {}", mountPoint);
    std::vector<unsigned char> buf(fsmap_sizeof(kRecordsPerCall));
    auto *head = reinterpret_cast<fsmap_head *>(buf.data());
    head->fmh_count = kRecordsPerCall;
    head->fmh_keys[0].fmr_device = encodedDevice(st.st_dev);
    head->fmh_keys[1].fmr_device = encodedDevice(st.st_dev);
    head->fmh_keys[1].fmr_physical = ~0ULL;
    head->fmh_keys[1].fmr_owner = ~0ULL;
    head->fmh_keys[1].fmr_offset = ~0ULL;
    head->fmh_keys[1].fmr_flags = ~0U;
    for (std::size_t scanned = 0;;) {
        if (::ioctl(fd.get(), FS_IOC_GETFSMAP, head) != 0)
            return failf(errno, "GETFSMAP on {}", mountPoint);
        for (std::uint32_t i = 0; i < head->fmh_entries; ++i) {
            const fsmap &r = head->fmh_recs[i];
            if (r.fmr_physical >= end)
                return out;
            if (overlaps(r, bad))
                out.push_back(
                    {r.fmr_physical, r.fmr_length, r.fmr_owner, r.fmr_offset, r.fmr_flags});
        }
        scanned += head->fmh_entries;
        if (head->fmh_entries == 0 ||
            (head->fmh_recs[head->fmh_entries - 1].fmr_flags & FMR_OF_LAST))
            return out;
        if (scanned >= maxScanned)
            return failf(0, "GETFSMAP on {}: stopped after {} records", mountPoint, scanned);
        fsmap_advance(head);
    }
}

} // namespace daxprobe
