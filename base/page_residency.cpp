#include "base/page_residency.h"

#include "base/root.h"

#include <cerrno>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"

namespace daxprobe
{

namespace
{

constexpr long kCachestatNr = 451; // x86_64, Linux 6.5+

struct CachestatRange {
    std::uint64_t off;
    std::uint64_t len; // 0 = to the end of the file
};
struct Cachestat {
    std::uint64_t nrCache, nrDirty, nrWriteback, nrEvicted, nrRecentlyEvicted;
};

bool tryCachestat(int fd, Residency &out)
{
    CachestatRange range{0, 0};
    Cachestat cs{};
    if (::syscall(kCachestatNr, fd, &range, &cs, 0) != 0)
        return false; // ENOSYS on older kernels: fall back to mincore
    long page = ::sysconf(_SC_PAGESIZE);
    out.method = "cachestat";
    out.residentBytes = cs.nrCache * static_cast<std::uint64_t>(page);
    out.dirtyBytes = cs.nrDirty * static_cast<std::uint64_t>(page);
    out.observe();
    return true;
}

void mincoreResidency(int fd, Residency &out)
{
    out.method = "mincore";
    if (out.sizeBytes == 0) {
        out.observe();
        return;
    }
    // A fresh mapping that we never touch: mincore then reports what is in
    // the page cache, not what our own faults brought in.
    void *addr = ::mmap(nullptr, out.sizeBytes, PROT_READ, MAP_SHARED, fd, 0);
    if (addr == MAP_FAILED) {
        out.fail(Error{errno, "mmap"}.describe());
        return;
    }
    long page = ::sysconf(_SC_PAGESIZE);
    std::size_t pages = (out.sizeBytes + page - 1) / page;
    std::vector<unsigned char> vec(pages);
    if (::mincore(addr, out.sizeBytes, vec.data()) != 0) {
        out.fail(Error{errno, "mincore"}.describe());
    } else {
        std::uint64_t resident = 0;
        for (unsigned char v : vec)
            resident += v & 1;
        out.residentBytes = resident * static_cast<std::uint64_t>(page);
        out.observe();
    }
    ::munmap(addr, out.sizeBytes);
}

} // namespace

Residency measureResidency(const std::string &path, bool isDax)
{
    Residency out;
    auto opened = openRegularFile(path, O_RDONLY | O_NOATIME);
    if (!opened) {
        out.fail(opened.error().describe());
        return out;
    }
    return measureResidency(opened->get(), path, isDax);
}

Residency measureResidency(int fd, const std::string &label, bool isDax)
{
    Residency out;
    struct stat st {
    };
    if (::fstat(fd, &st) != 0) {
        out.fail(Error{errno, "stat " + label}.describe());
        return out;
    }
    out.sizeBytes = static_cast<std::uint64_t>(st.st_size);
    if (isDax) {
        out.method = "not_applicable";
        out.observe("DAX file: reads and mappings bypass the page cache");
        return out;
    }
    if (!tryCachestat(fd, out))
        mincoreResidency(fd, out);
    return out;
}

} // namespace daxprobe
