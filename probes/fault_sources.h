#pragma once

#include <optional>
#include <string>
#include <vector>

#include "root.h"
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

// Live: opens (and closes) a software page-fault counter on this process.
PerfAvailability probePerf(const Root &root);
TracepointAvailability probeTracepoints(const Root &root);
FaultFacts readFaultFacts(const Root &root, bool live);

} // namespace daxprobe
