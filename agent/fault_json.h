#pragma once

#include <nlohmann/json.hpp>

#include "probes/judges/footprint.h"
#include "probes/readers/fault_counters.h"

namespace daxprobe
{

// The fs_dax tracepoints' counts, the same in every report that has them
// (agent/PROFILE.md): dax_pmd, dax_pmd_fallback, dax_pte (null when not
// counted) and tracepoint_error.
nlohmann::json daxFaultsJson(const FaultCounts &c);

// The "faults" object of a run counted by perf, or by rusage when perf
// could not: source, minor, major, why not perf, and the fs_dax counts.
nlohmann::json faultsJson(const FaultNumbers &f, const FaultCounts &c);

} // namespace daxprobe
