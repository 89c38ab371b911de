#include "probes/readers/fault_sources.h"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "probes/readers/text_util.h"

namespace daxprobe
{

Result<UniqueFD> openPerfCounter(std::uint32_t type, std::uint64_t config, const PerfTarget &target,
                                 bool *kernelExcluded)
{
    perf_event_attr attr;
    std::memset(&attr, 0, sizeof(attr));
    attr.size = sizeof(attr);
    attr.type = type;
    attr.config = config;
    attr.disabled = 1;
    attr.inherit = target.inherit ? 1 : 0;
    attr.enable_on_exec = target.enableOnExec ? 1 : 0;
    long fd = ::syscall(SYS_perf_event_open, &attr, target.pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0 && (errno == EACCES || errno == EPERM) && type == PERF_TYPE_SOFTWARE) {
        attr.exclude_kernel = 1; // allowed at perf_event_paranoid 2
        fd = ::syscall(SYS_perf_event_open, &attr, target.pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
        if (fd >= 0 && kernelExcluded)
            *kernelExcluded = true;
    }
    if (fd < 0)
        return failf(errno, "perf_event_open(type {}, config {})", type, config);
    return UniqueFD(static_cast<int>(fd));
}

namespace
{

std::optional<int> readParanoid(const Root &root)
{
    if (auto p = root.readAttr("proc/sys/kernel/perf_event_paranoid"))
        if (auto v = parseI64(*p))
            return static_cast<int>(*v);
    return std::nullopt;
}

constexpr int kCapSysAdmin = 21;
constexpr int kCapPerfmon = 38;

// This process's effective capabilities (CapEff in /proc/self/status).
std::optional<std::uint64_t> effectiveCaps(const Root &root)
{
    auto status = root.readAttr("proc/self/status");
    if (!status)
        return std::nullopt;
    for (auto line : splitLines(*status))
        if (line.substr(0, 7) == "CapEff:") {
            auto hex = trim(line.substr(7));
            std::uint64_t v = 0;
            auto [end, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), v, 16);
            if (ec != std::errc() || end != hex.data() + hex.size() || hex.empty())
                return std::nullopt;
            return v;
        }
    return std::nullopt;
}

// Why perf_event_open was refused, and what would allow it. Debian's kernels
// add perf_event_paranoid=3 (their default): then only CAP_SYS_ADMIN may open
// perf events, CAP_PERFMON is not enough (so a unit that keeps CAP_PERFMON
// alone is refused while a root shell is not).
std::string deniedReason(const Root &root, std::optional<int> paranoid)
{
    std::string level = paranoid ? std::to_string(*paranoid) : "?";
    auto caps = effectiveCaps(root);
    bool sysAdmin = caps && (*caps >> kCapSysAdmin & 1);
    if (paranoid && *paranoid >= 3 && caps && !sysAdmin)
        return fmt::format("no permission (perf_event_paranoid={}: this kernel then allows perf "
                           "events only with CAP_SYS_ADMIN, which this process lacks{}); "
                           "sysctl kernel.perf_event_paranoid=2 lets it count its own faults",
                           level, (*caps >> kCapPerfmon & 1) ? " (it has CAP_PERFMON)" : "");
    return fmt::format("no permission (perf_event_paranoid={}); run as root or "
                       "sysctl kernel.perf_event_paranoid=1",
                       level);
}

} // namespace

PerfAvailability probePerf(const Root &root)
{
    PerfAvailability out;
    out.paranoid = readParanoid(root);

    auto counter = openPerfCounter(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS);
    if (!counter) {
        int err = counter.error().code;
        if (err == EACCES || err == EPERM)
            out.fail(deniedReason(root, out.paranoid));
        else if (err == ENOENT || err == ENOSYS || err == EOPNOTSUPP)
            out.fail("kernel has no perf software events (CONFIG_PERF_EVENTS off?)");
        else
            out.fail(counter.error().describe());
        return out;
    }
    out.observe();
    return out;
}

PerfAvailability FaultProbeCache::perf(const Root &root)
{
    auto paranoid = readParanoid(root);
    if (!perf_ || paranoid != paranoidAtProbe_) {
        perf_ = perfProbe_(root);
        paranoidAtProbe_ = paranoid;
    }
    return *perf_;
}

TracepointAvailability FaultProbeCache::tracepoints(const Root &root)
{
    if (!tracepoints_ || !tracepoints_->observed() ||
        !root.exists(tracepoints_->tracefs + "/events/fs_dax"))
        tracepoints_ = tracepointProbe_(root);
    return *tracepoints_;
}

TracepointAvailability probeTracepoints(const Root &root)
{
    TracepointAvailability out;
    // Denied at either place: the second place's "No such file" must not
    // turn a permission problem into advice to mount tracefs.
    bool denied = false;
    for (const char *dir : {"sys/kernel/tracing", "sys/kernel/debug/tracing"}) {
        auto text = root.readFile(std::string(dir) + "/available_events", 4 << 20);
        if (!text) {
            denied = denied || text.error().code == EACCES || text.error().code == EPERM;
            continue;
        }
        out.tracefs = std::string("/") + dir;
        for (auto line : splitLines(*text))
            if (line.substr(0, 7) == "fs_dax:")
                out.events.emplace_back(line.substr(7));
        if (out.events.empty()) {
            out.fail("kernel offers no fs_dax tracepoints (CONFIG_FS_DAX or FTRACE off)");
            return out;
        }
        out.observe();
        return out;
    }
    out.fail(denied ? "tracefs not readable: run as root"
                    : "tracefs not mounted: mount -t tracefs nodev /sys/kernel/tracing");
    return out;
}

FaultFacts readFaultFacts(const Root &root, bool live, FaultProbeCache *cache)
{
    FaultFacts out;
    storeOrDescribe(root.readFile("proc/vmstat").and_then(parseVmstat), out.vmstat,
                    out.vmstatError);
    if (live)
        out.perf = cache ? cache->perf(root) : probePerf(root);
    out.tracepoints = cache ? cache->tracepoints(root) : probeTracepoints(root);
    return out;
}

} // namespace daxprobe
