#include "probes/readers/fault_profile.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/page_walk.h"
#include "base/result.h"
#include "base/unique_fd.h"
#include "base/unique_mapping.h"
#include "probes/readers/dax_evidence.h"

namespace daxprobe
{

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
    StatxEvidence sx = statxDax(path);
    p.dax = sx.observed() && sx.dax;
    p.before = measureResidency(path, p.dax);

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
