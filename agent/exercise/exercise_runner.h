#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/page_residency.h"
#include "base/root.h"
#include "probes/judges/footprint.h"
#include "probes/readers/dax_evidence.h"
#include "probes/readers/fault_counters.h"

namespace daxprobe
{

struct ExerciseOptions {
    std::string path;
    std::uint64_t sizeBytes = 32ull << 20; // whole 2 MiB extents (parseExerciseSize)
    bool noPerf = false;
};

// One phase of the workload, measured on its own: the file's page cache is
// dropped before it (fsync, then POSIX_FADV_DONTNEED), and the counters run
// only while it touches the file.
struct ExercisePhase {
    std::string name; // read | mmap_read | mmap_write
    std::uint64_t bytes = 0;
    double seconds = 0;
    std::optional<std::int64_t> cachedKbBefore, cachedKbAfter;
    Residency before, after;                        // not measured on a DAX file
    FaultCounts counts;                             // perf, this process only
    std::uint64_t rusageMinor = 0, rusageMajor = 0; // getrusage deltas, the fallback
    std::map<std::string, std::int64_t> vmstatDelta;
    FootprintVerdict footprint;
    std::string error;
};

struct ExerciseRun {
    std::string path;
    std::uint64_t sizeBytes = 0;
    bool created = false;    // we made the file (so we remove it)
    StatxEvidence statx;     // the file as made: DAX or not, or why statx could not say
    std::string error;       // setup failed, or a phase did
    bool usageError = false; // e.g. the path exists: nothing was touched
    std::vector<ExercisePhase> phases;
    FootprintVerdict footprint;
    bool removed = false;    // the file created is gone: its name unlinked, no other link left
    std::string removeNote;  // removed, but the path no longer leads there
    std::string removeError; // not removed: why (e.g. the name now leads elsewhere)

    bool dax() const { return statx.observed() && statx.dax; }
};

// Creates PATH (never an existing file), allocates it whole with
// posix_fallocate so its extents can be mapped 2 MiB at a time, fills it,
// then: a sequential read(), a read through a 2 MiB-aligned shared mapping,
// a write through one (one byte per 4 KiB page, then msync). Removes the
// file it created however it ends, and nothing else: not what PATH names by
// then if another user moved its directory or replaced the name.
ExerciseRun runExercise(const Root &root, const ExerciseOptions &options);

} // namespace daxprobe
