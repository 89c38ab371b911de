#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/root.h"
#include "base/unique_fd.h"
#include "probes/readers/fault_sources.h"

namespace daxprobe
{

// Page-fault numbers counted by the kernel as perf events: software
// minor/major page-fault counters and the fs_dax tracepoints (as perf
// tracepoint counters, so no global tracing state changes). The tracepoints
// are the evidence for PMD use: under DAX a "major" fault only means a newly
// allocated block, but dax_pmd_fault_done with VM_FAULT_FALLBACK is a 2 MiB
// fault that had to be served as 4 KiB.
struct FaultCounts {
    std::optional<std::uint64_t> minorFaults;
    std::optional<std::uint64_t> majorFaults;
    std::string perfError;
    std::string perfNote;                      // counted, with a caveat (user-mode faults only)
    std::optional<std::uint64_t> pmdFaults;    // dax_pmd_fault_done
    std::optional<std::uint64_t> pmdFallbacks; // ... whose result has VM_FAULT_FALLBACK
    std::optional<std::uint64_t> pteFaults;    // dax_pte_fault_done
    std::string tracepointError;
};

// The counters for one target (this process, or a child about to exec),
// each an owned perf fd. Opening never fails as a whole: what could not be
// opened is left unset and its reason kept, so callers fall back per number.
class FaultCounters
{
  public:
    // noPerf: open nothing (the caller measures with rusage and vmstat only);
    // the reason given is reported as the perf and tracepoint error.
    static FaultCounters open(const Root &root, const PerfTarget &target,
                              const std::string &noPerf = {});

    bool perfCounting() const { return minor_.isValid() && major_.isValid(); }
    void enable();
    void disable();
    // Totals so far (with inherit: of every child that has exited).
    FaultCounts read() const;

  private:
    struct Tracepoint {
        UniqueFD fd;
        std::optional<std::uint64_t> FaultCounts::*out;
    };
    UniqueFD minor_;
    UniqueFD major_;
    std::vector<Tracepoint> tracepoints_;
    std::string perfError_;
    std::string perfNote_;
    std::string tracepointError_;
};

} // namespace daxprobe
