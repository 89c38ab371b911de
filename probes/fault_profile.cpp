#include "fault_profile.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <vector>

#include "dax_evidence.h"
#include "fault_sources.h"
#include "result.h"
#include "text_util.h"
#include "unique_fd.h"

namespace daxprobe {

namespace {

constexpr std::uint64_t kVmFaultFallback = 0x800; // include/linux/mm_types.h

std::optional<std::uint64_t> readCounter(const UniqueFD &fd)
{
    std::uint64_t v = 0;
    if (!fd || ::read(fd.get(), &v, sizeof(v)) != sizeof(v))
        return std::nullopt;
    return v;
}

struct TracepointCounter {
    UniqueFD fd;
    std::optional<std::uint64_t> *out = nullptr;
};

Result<UniqueFD> openTracepoint(const Root &root, const std::string &tracefs, const char *event,
                                const char *filter)
{
    auto id = root.readUnsigned(tracefs + "/events/fs_dax/" + event + "/id");
    if (!id)
        return tl::unexpected(id.error());
    auto fd = openPerfCounter(PERF_TYPE_TRACEPOINT, *id);
    if (!fd)
        return fd;
    if (filter && ::ioctl(fd->get(), PERF_EVENT_IOC_SET_FILTER, filter) != 0)
        return failf(errno, "set filter '{}' on {}", filter, event);
    return fd;
}

} // namespace

FaultProfile profileFile(const Root &root, const std::string &path, bool write)
{
    FaultProfile p;
    p.path = path;
    p.write = write;
    auto opened = openRegularFile(path, write ? O_RDWR : O_RDONLY);
    if (!opened) {
        p.error = opened.error().describe();
        return p;
    }
    UniqueFD fd = std::move(*opened);
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) {
        p.error = Error{errno, "stat " + path}.describe();
        return p;
    }
    if (!S_ISREG(st.st_mode) || st.st_size == 0) {
        p.error = path + ": not a non-empty regular file";
        return p;
    }
    p.sizeBytes = static_cast<std::uint64_t>(st.st_size);
    StatxEvidence sx = statxDax(path);
    p.dax = sx.error.empty() && sx.dax;
    p.before = measureResidency(path, p.dax);

    UniqueFD minor, major;
    if (auto c = openPerfCounter(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN))
        minor = std::move(*c);
    else
        p.counts.perfError = c.error().describe();
    if (auto c = openPerfCounter(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ))
        major = std::move(*c);

    std::vector<TracepointCounter> tps;
    std::string tracefs;
    for (const char *dir : {"sys/kernel/tracing", "sys/kernel/debug/tracing"})
        if (root.exists(std::string(dir) + "/events/fs_dax")) {
            tracefs = dir;
            break;
        }
    if (tracefs.empty()) {
        p.counts.tracepointError = "no fs_dax tracepoints (tracefs not mounted, or not root)";
    } else {
        const std::string fallbackFilter = fmt::format("result & {}", kVmFaultFallback);
        struct {
            const char *event;
            const char *filter;
            std::optional<std::uint64_t> *out;
        } wanted[] = {{"dax_pmd_fault_done", nullptr, &p.counts.pmdFaults},
                      {"dax_pmd_fault_done", fallbackFilter.c_str(), &p.counts.pmdFallbacks},
                      {"dax_pte_fault_done", nullptr, &p.counts.pteFaults}};
        for (auto &w : wanted) {
            auto c = openTracepoint(root, tracefs, w.event, w.filter);
            if (!c) {
                if (p.counts.tracepointError.empty())
                    p.counts.tracepointError = c.error().describe();
                continue;
            }
            tps.push_back({std::move(*c), w.out});
        }
    }

    long page = ::sysconf(_SC_PAGESIZE);
    // A fresh mapping: faults counted are the ones this walk takes.
    void *addr = ::mmap(nullptr, p.sizeBytes, write ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED,
                        fd.get(), 0);
    if (addr == MAP_FAILED) {
        p.error = Error{errno, "mmap " + path}.describe();
        return p;
    }
    auto enable = [&](unsigned long req) {
        for (UniqueFD *c : {&minor, &major})
            if (*c)
                ::ioctl(c->get(), req, 0);
        for (auto &t : tps)
            ::ioctl(t.fd.get(), req, 0);
    };
    auto start = std::chrono::steady_clock::now();
    enable(PERF_EVENT_IOC_ENABLE);
    volatile unsigned char *bytes = static_cast<volatile unsigned char *>(addr);
    unsigned sink = 0;
    for (std::uint64_t off = 0; off < p.sizeBytes; off += static_cast<std::uint64_t>(page)) {
        if (write)
            bytes[off] = static_cast<unsigned char>(bytes[off] + 0); // same value, still a write fault
        else
            sink += bytes[off];
        ++p.pagesTouched;
    }
    enable(PERF_EVENT_IOC_DISABLE);
    p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    (void)sink;
    ::munmap(addr, p.sizeBytes);

    p.counts.minorFaults = readCounter(minor);
    p.counts.majorFaults = readCounter(major);
    for (auto &t : tps)
        *t.out = readCounter(t.fd);
    p.after = measureResidency(path, p.dax);
    return p;
}

} // namespace daxprobe
