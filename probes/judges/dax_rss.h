#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "probes/readers/fault_counters.h"

namespace daxprobe
{

// What a command's peak RSS leaves out: pages it mapped through DAX are the
// namespace's, not RAM, and the kernel does not count them in RSS (Debian
// 12's 6.1: a command that wrote 64 MiB through a DAX mapping, 16384 DAX PTE
// faults, had a peak RSS of 1388 kB: tests/fixtures/fsdax-ext4/_vm/
// profile-cmd.json; smaps Rss of a PMD-mapped 64 MiB DAX mapping: 128 kB).
// Said only when the fs_dax tracepoints counted DAX faults that mapped
// something (a 2 MiB fault that did not fall back maps 2 MiB, a 4 KiB one
// 4 KiB, so their sum bounds what was mapped: a page faulted twice, read
// then written, counts twice, "up to") and peak RSS is below half of that:
// the kernel's own numbers show the pages left out, on whatever kernel.
struct DaxRssNote {
    std::uint64_t daxFaults = 0;       // PMD faults that mapped + PTE faults
    std::uint64_t mappedBytesUpTo = 0; // their pages' bytes
    std::string text;
};

std::optional<DaxRssNote> judgeDaxRss(const FaultCounts &counts, std::uint64_t peakRssKb);

} // namespace daxprobe
