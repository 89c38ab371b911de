#include "probes/readers/fault_profile.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <fmt/format.h>

#include "base/page_walk.h"
#include "base/result.h"
#include "base/unique_fd.h"
#include "base/unique_mapping.h"
#include "probes/readers/blockdev.h"
#include "probes/readers/dax_evidence.h"
#include "probes/readers/fiemap.h"
#include "probes/readers/sysfs_topology.h"

namespace daxprobe
{

namespace
{

// The filesystems whose 2 MiB advice differs (profile_verdict.h), by the
// superblock magic fstatfs gives (uapi linux/magic.h).
std::string filesystemOf(int fd)
{
    struct statfs sf {
    };
    if (::fstatfs(fd, &sf) != 0)
        return {};
    switch (static_cast<std::uint32_t>(sf.f_type)) {
    case 0xE0F5E1E2: // EROFS_SUPER_MAGIC_V1
        return "erofs";
    case 0x58465342: // XFS_SUPER_MAGIC
        return "xfs";
    case 0xEF53: // EXT4_SUPER_MAGIC (ext2/3 too: the same advice)
        return "ext4";
    }
    return {};
}

// memoryOffset: where the filesystem's byte 0 lies in physical memory,
// modulo 2 MiB (a partition off the grid moves every extent off it).
PmdLayout layoutOf(int fd, std::uint64_t size, std::uint64_t memoryOffset)
{
    std::vector<FileExtent> extents;
    constexpr std::uint32_t unplaced = FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC |
                                       FIEMAP_EXTENT_ENCODED | FIEMAP_EXTENT_DATA_INLINE |
                                       FIEMAP_EXTENT_DATA_TAIL | FIEMAP_EXTENT_NOT_ALIGNED;
    forEachExtent(fd, [&](const fiemap_extent &e) {
        extents.push_back(
            {e.fe_logical, e.fe_physical + memoryOffset, e.fe_length, !(e.fe_flags & unplaced)});
        return true;
    });
    if (extents.empty())
        return {}; // no FIEMAP here: not observed
    return pmdLayoutOf(std::move(extents), size);
}

// The nd namespace behind the file's block device, by its number (a
// partition's is its disk's), and where the filesystem starts in memory.
DeviceFacts deviceOf(const Root &root, dev_t dev)
{
    DeviceFacts out;
    auto b = readBlockDevByNumber(root, major(dev), minor(dev));
    if (!b)
        return out;
    out.blockdev = b->name;
    Topology topo = readTopologyFromSysfs(root);
    const NdNamespace *ns = topo.namespaceByBlockdev(b->disk());
    if (ns == nullptr)
        return out;
    out.ns = ns->dev;
    out.mode = ns->mode;
    out.align = ns->align;
    if (const NdBus *bus = topo.busOf(*ns))
        out.provider = bus->provider;
    if (ns->dataStart && b->partitionStart)
        out.memoryOffset = (*ns->dataStart + *b->partitionStart) % kPmdSize;
    return out;
}

} // namespace

Result<FaultProfile> profileFile(const Root &root, const std::string &path, bool write)
{
    FaultProfile p;
    p.path = path;
    p.write = write;
    auto opened = openRegularFile(path, write ? O_RDWR : O_RDONLY);
    if (!opened)
        return tl::unexpected(opened.error());
    UniqueFD fd = std::move(*opened);
    struct stat st {
    };
    if (::fstat(fd.get(), &st) != 0)
        return failf(errno, "stat {}", path);
    if (!S_ISREG(st.st_mode) || st.st_size == 0)
        return fail(path + ": not a non-empty regular file");
    p.sizeBytes = static_cast<std::uint64_t>(st.st_size);
    p.fstype = filesystemOf(fd.get());
    StatxEvidence sx = statxDax(path);
    p.dax = sx.observed() && sx.dax;
    p.before = measureResidency(path, p.dax);
    if (p.dax) {
        p.device = deviceOf(root, st.st_dev);
        p.layout = layoutOf(fd.get(), p.sizeBytes, p.device.memoryOffset);
    }

    FaultCounters counters = FaultCounters::open(root, PerfTarget{});

    long page = ::sysconf(_SC_PAGESIZE);
    // A fresh mapping: faults counted are the ones this walk takes.
    UniqueMapping map(::mmap(nullptr, p.sizeBytes, write ? PROT_READ | PROT_WRITE : PROT_READ,
                             MAP_SHARED, fd.get(), 0),
                      p.sizeBytes);
    if (!map)
        return failf(errno, "mmap {}", path);
    auto start = std::chrono::steady_clock::now();
    counters.enable();
    PageWalk walk = touchPages(map.get(), p.sizeBytes, static_cast<std::size_t>(page),
                               write ? PageTouch::Rewrite : PageTouch::Read);
    counters.disable();
    p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    p.pagesTouched = walk.pagesTouched;
    p.sigbusOffset = walk.sigbusOffset;
    map.reset();

    p.counts = counters.read();
    p.after = measureResidency(path, p.dax);
    return p;
}

} // namespace daxprobe
