#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "residency.h"
#include "root.h"

namespace daxprobe {

// What touching every page of a fresh mapping of one file costs, counted by
// the kernel for this process only: perf software page-fault counters and
// the fs_dax tracepoints (as perf tracepoint counters, so no global tracing
// state changes). The tracepoints are the evidence for PMD use: under DAX a
// "major" fault only means a newly allocated block, but dax_pmd_fault_done
// with VM_FAULT_FALLBACK is a 2 MiB fault that had to be served as 4 KiB.
struct FaultCounts {
    std::optional<std::uint64_t> minorFaults;
    std::optional<std::uint64_t> majorFaults;
    std::string perfError;
    std::optional<std::uint64_t> pmdFaults;     // dax_pmd_fault_done
    std::optional<std::uint64_t> pmdFallbacks;  // ... whose result has VM_FAULT_FALLBACK
    std::optional<std::uint64_t> pteFaults;     // dax_pte_fault_done
    std::string tracepointError;
};

struct FaultProfile {
    std::string path;
    std::uint64_t sizeBytes = 0;
    std::uint64_t pagesTouched = 0;
    bool write = false;
    bool dax = false;
    std::string error; // the profile could not run at all
    FaultCounts counts;
    Residency before;
    Residency after;
    double seconds = 0;
};

// Maps `path` (read-only unless `write`), touches one byte per 4 KiB page,
// and counts. Reads the file: that is the point, and it is why this is a
// separate command and not part of `check`.
FaultProfile profileFile(const Root &root, const std::string &path, bool write);

} // namespace daxprobe
