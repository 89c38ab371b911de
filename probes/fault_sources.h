#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "result.h"
#include "root.h"
#include "unique_fd.h"
#include "vmstat.h"

namespace daxprobe {

// Where page-fault numbers can come from on this system, and why not when
// they cannot (perf permission, no tracefs, ...).
struct PerfAvailability {
    bool usable = false;
    std::string reason;
    std::optional<int> paranoid; // kernel.perf_event_paranoid
};

struct TracepointAvailability {
    bool usable = false;
    std::string reason;
    std::string tracefs;             // where it was found
    std::vector<std::string> events; // fs_dax:* events the kernel offers
};

struct FaultFacts {
    Vmstat vmstat;
    std::string vmstatError;
    PerfAvailability perf;
    TracepointAvailability tracepoints;
};

// A disabled counter for this process on any CPU, close-on-exec; software
// events retry without kernel counting when perf_event_paranoid forbids it.
Result<UniqueFD> openPerfCounter(std::uint32_t type, std::uint64_t config);

// Live: opens (and closes) a software page-fault counter on this process.
PerfAvailability probePerf(const Root &root);
TracepointAvailability probeTracepoints(const Root &root);
FaultFacts readFaultFacts(const Root &root, bool live);

} // namespace daxprobe
