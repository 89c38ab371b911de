#include "probes/readers/fault_counters.h"

#include <cerrno>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <fmt/format.h>

namespace daxprobe
{

namespace
{

constexpr std::uint64_t kVmFaultFallback = 0x800; // include/linux/mm_types.h

std::optional<std::uint64_t> readCounter(const UniqueFD &fd)
{
    std::uint64_t v = 0;
    if (!fd || ::read(fd.get(), &v, sizeof(v)) != sizeof(v))
        return std::nullopt;
    return v;
}

Result<UniqueFD> openTracepoint(const Root &root, const std::string &tracefs, const char *event,
                                const char *filter, const PerfTarget &target)
{
    auto id = root.readUnsigned(tracefs + "/events/fs_dax/" + event + "/id");
    if (!id)
        return tl::unexpected(id.error());
    auto fd = openPerfCounter(PERF_TYPE_TRACEPOINT, *id, target);
    if (!fd)
        return fd;
    // Inherited copies of the event use this (the parent's) filter.
    if (filter && ::ioctl(fd->get(), PERF_EVENT_IOC_SET_FILTER, filter) != 0)
        return failf(errno, "set filter '{}' on {}", filter, event);
    return fd;
}

} // namespace

FaultCounters FaultCounters::open(const Root &root, const PerfTarget &target,
                                  const std::string &noPerf)
{
    FaultCounters c;
    if (!noPerf.empty()) {
        c.perfError_ = noPerf;
        c.tracepointError_ = noPerf;
        return c;
    }
    bool userOnly = false;
    if (auto fd =
            openPerfCounter(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, target, &userOnly))
        c.minor_ = std::move(*fd);
    else
        c.perfError_ = fd.error().describe();
    if (auto fd =
            openPerfCounter(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, target, &userOnly))
        c.major_ = std::move(*fd);
    else if (c.perfError_.empty())
        c.perfError_ = fd.error().describe();
    if (userOnly)
        c.perfNote_ =
            "user-mode faults only: perf_event_paranoid forbids counting kernel-mode ones "
            "(run as root, or sysctl kernel.perf_event_paranoid=1)";

    std::string tracefs;
    for (const char *dir : {"sys/kernel/tracing", "sys/kernel/debug/tracing"})
        if (root.exists(std::string(dir) + "/events/fs_dax")) {
            tracefs = dir;
            break;
        }
    if (tracefs.empty()) {
        c.tracepointError_ = "no fs_dax tracepoints (tracefs not mounted, or not root)";
        return c;
    }
    const std::string fallbackFilter = fmt::format("result & {}", kVmFaultFallback);
    struct {
        const char *event;
        const char *filter;
        std::optional<std::uint64_t> FaultCounts::*out;
    } wanted[] = {{"dax_pmd_fault_done", nullptr, &FaultCounts::pmdFaults},
                  {"dax_pmd_fault_done", fallbackFilter.c_str(), &FaultCounts::pmdFallbacks},
                  {"dax_pte_fault_done", nullptr, &FaultCounts::pteFaults}};
    for (auto &w : wanted) {
        auto fd = openTracepoint(root, tracefs, w.event, w.filter, target);
        if (!fd) {
            if (c.tracepointError_.empty())
                c.tracepointError_ = fd.error().describe();
            continue;
        }
        c.tracepoints_.push_back({std::move(*fd), w.out});
    }
    return c;
}

void FaultCounters::enable()
{
    for (const UniqueFD *fd : {&minor_, &major_})
        if (*fd)
            ::ioctl(fd->get(), PERF_EVENT_IOC_ENABLE, 0);
    for (auto &t : tracepoints_)
        ::ioctl(t.fd.get(), PERF_EVENT_IOC_ENABLE, 0);
}

void FaultCounters::disable()
{
    for (const UniqueFD *fd : {&minor_, &major_})
        if (*fd)
            ::ioctl(fd->get(), PERF_EVENT_IOC_DISABLE, 0);
    for (auto &t : tracepoints_)
        ::ioctl(t.fd.get(), PERF_EVENT_IOC_DISABLE, 0);
}

FaultCounts FaultCounters::read() const
{
    FaultCounts out;
    out.minorFaults = readCounter(minor_);
    out.majorFaults = readCounter(major_);
    out.perfError = perfError_;
    out.perfNote = perfNote_;
    out.tracepointError = tracepointError_;
    for (const auto &t : tracepoints_)
        out.*(t.out) = readCounter(t.fd);
    return out;
}

} // namespace daxprobe
