#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

#include "base/evidence_state.h"
#include "base/result.h"
#include "base/root.h"
#include "base/unique_fd.h"
#include "probes/readers/vmstat.h"

namespace daxprobe
{

// Where page-fault numbers can come from on this system. Observed: the
// source is usable. Failed: it is not, and text says why and what allows it
// (perf permission, no tracefs, ...). Not run: not probed (perf is probed
// only on a live run).
struct PerfAvailability : EvidenceOutcome {
    std::optional<int> paranoid; // kernel.perf_event_paranoid
};

struct TracepointAvailability : EvidenceOutcome {
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

TracepointAvailability probeTracepoints(const Root &root);

// The two probes' answers, kept by a caller that checks again and again
// (the agent):
// - perf: each open and close of a counter patches the kernel's jump labels,
//   an IPI to every CPU (and new code for TCG to translate). Probed again
//   when perf_event_paranoid changed: the remedy the answer names.
// - tracepoints: available_events is ~60 KB of text the kernel generates on
//   every read. A found answer holds while its events/fs_dax directory is
//   there (the events are built in); a missing one is looked for again.
class FaultProbeCache
{
  public:
    using PerfProbe = PerfAvailability (*)(const Root &);
    using TracepointProbe = TracepointAvailability (*)(const Root &);
    explicit FaultProbeCache(PerfProbe perf = probePerf,
                             TracepointProbe tracepoints = probeTracepoints)
        : perfProbe_(perf), tracepointProbe_(tracepoints)
    {
    }
    PerfAvailability perf(const Root &root);
    TracepointAvailability tracepoints(const Root &root);

  private:
    PerfProbe perfProbe_;
    TracepointProbe tracepointProbe_;
    std::optional<PerfAvailability> perf_;
    std::optional<int> paranoidAtProbe_;
    std::optional<TracepointAvailability> tracepoints_;
};

// vmstat and the tracepoints; perf too when live. `cache`: the agent's.
FaultFacts readFaultFacts(const Root &root, bool live, FaultProbeCache *cache = nullptr);

} // namespace daxprobe
