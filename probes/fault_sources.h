#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

#include "result.h"
#include "root.h"
#include "unique_fd.h"
#include "vmstat.h"

namespace daxprobe
{

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

// Whose events a counter counts: this process (pid 0), or another one;
// inherit: also its children forked after the counter was opened;
// enableOnExec: starts disabled and switches on at the target's next
// execve (how `perf stat -- CMD` counts only the command).
struct PerfTarget {
    pid_t pid = 0;
    bool inherit = false;
    bool enableOnExec = false;
};

// A disabled counter on any CPU, close-on-exec; software events retry
// without kernel counting when perf_event_paranoid forbids it, and then set
// *kernelExcluded (faults taken in kernel mode, e.g. copying to a user
// buffer, are then missing from the count).
Result<UniqueFD> openPerfCounter(std::uint32_t type, std::uint64_t config,
                                 const PerfTarget &target = {}, bool *kernelExcluded = nullptr);

// Live: opens (and closes) a software page-fault counter on this process.
PerfAvailability probePerf(const Root &root);

// probePerf's answer kept by a caller that checks again and again (the
// agent): each open and close of a counter patches the kernel's jump labels,
// an IPI to every CPU (and new code for TCG to translate). Probed again when
// perf_event_paranoid changed: the remedy the answer names.
class PerfProbeCache
{
  public:
    using Probe = PerfAvailability (*)(const Root &);
    explicit PerfProbeCache(Probe probe = probePerf) : probe_(probe) {}
    PerfAvailability get(const Root &root);

  private:
    Probe probe_;
    std::optional<PerfAvailability> last_;
    std::optional<int> paranoidAtProbe_;
};
TracepointAvailability probeTracepoints(const Root &root);
FaultFacts readFaultFacts(const Root &root, bool live);

} // namespace daxprobe
