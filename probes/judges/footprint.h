#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "probes/readers/meminfo.h"
#include "probes/readers/vmstat.h"

namespace daxprobe
{

// The arithmetic of `daxprobe profile -- CMD` and `daxprobe exercise`: pure
// functions of numbers read before and after, so every rule is unit-tested.

// after - before of each named counter present in both (signed: nr_* gauges
// can shrink). A name missing on either side is left out, not reported as 0.
std::map<std::string, std::int64_t> vmstatDelta(const Vmstat &before, const Vmstat &after,
                                                const std::vector<std::string> &names);

// A /proc/meminfo field in kB (meminfo.h keeps bytes), if present.
std::optional<std::int64_t> meminfoKb(const Meminfo &m, const std::string &name);
// after - before of a meminfo field in kB, if both have it.
std::optional<std::int64_t> meminfoDeltaKb(const Meminfo &before, const Meminfo &after,
                                           const std::string &name);

// How a waited-for child ended, and the exit status `daxprobe profile`
// passes on (as time(1) and the shell do): its own status, 128+N for a
// signal N.
struct ChildEnd {
    std::optional<int> exitStatus;
    std::optional<int> signal;
    int passOn = 0;
};
ChildEnd decodeWaitStatus(int status);

// Which fault numbers to report: perf's (counted from exec on, for the
// command and its children) when perf counted, else the rusage ones.
struct FaultNumbers {
    std::string source; // "perf" | "rusage"
    std::uint64_t minor = 0;
    std::uint64_t major = 0;
};
FaultNumbers chooseFaults(const std::optional<std::uint64_t> &perfMinor,
                          const std::optional<std::uint64_t> &perfMajor, std::uint64_t rusageMinor,
                          std::uint64_t rusageMajor);

// What a workload did to the page cache, judged against what it touched.
//   no_page_cache        DAX: the page cache grew by less than 1/8 of the bytes touched
//   page_cache           not DAX: it grew by at least 3/4 of them
//   dax_but_cache_grew   DAX, yet it grew by 1/8 or more (other activity, or not really DAX)
//   cache_not_grown      not DAX, yet it grew by less than 3/4 (already cached, or reclaimed)
//   unknown              nothing to judge by
// Growth is the file's own residency where it could be measured (exact),
// else meminfo Cached (system-wide, so other activity counts too).
struct FootprintInput {
    bool dax = false;
    std::uint64_t bytesTouched = 0;
    std::optional<std::int64_t> cachedDeltaBytes;   // meminfo Cached after - before
    std::optional<std::int64_t> residentDeltaBytes; // the file's residency after - before
};
struct FootprintVerdict {
    std::string code;
    std::string summary;
};
FootprintVerdict judgeFootprint(const FootprintInput &in);

// One verdict over several phases: theirs when they agree, else "mixed"
// naming each phase's code.
FootprintVerdict
combineFootprints(const std::vector<std::pair<std::string, FootprintVerdict>> &phases);

// The exercise's file size: --size as bytes with an optional K/M/G suffix
// (powers of 1024), rounded up to whole 2 MiB extents, at least one.
Result<std::uint64_t> parseExerciseSize(std::string_view text);

constexpr std::uint64_t kPmdBytes = 2ull << 20;

} // namespace daxprobe
