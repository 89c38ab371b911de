#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/page_residency.h"
#include "base/result.h"
#include "base/root.h"
#include "probes/readers/fault_counters.h"
#include "probes/readers/pmd_layout.h"

namespace daxprobe
{

// What touching every page of a fresh mapping of one file costs, counted by
// the kernel for this process only (fault_counters.h).
struct FaultProfile {
    std::string path;
    std::uint64_t sizeBytes = 0;
    std::uint64_t pagesTouched = 0;
    bool write = false;
    bool dax = false;
    std::string fstype; // erofs, xfs, ext4, or empty (another; fstatfs's magic)
    FaultCounts counts;
    // DAX files only: why 2 MiB faults could fall back (profile_verdict.h).
    PmdLayout layout;
    DeviceFacts device;
    Residency before;
    Residency after;
    double seconds = 0;
    // The walk stopped at this file offset: its page raised SIGBUS (a
    // poisoned page, a pmem media error; or the file shrank meanwhile).
    std::optional<std::uint64_t> sigbusOffset;
};

// Maps `path` (read-only unless `write`), touches one byte per 4 KiB page,
// and counts; an error when the file cannot be opened or mapped at all. A
// page that raises SIGBUS ends the walk there (sigbusOffset), not the process.
// Reads the file: that is the point, and it is why this is a separate
// command and not part of `check`.
Result<FaultProfile> profileFile(const Root &root, const std::string &path, bool write);

} // namespace daxprobe
