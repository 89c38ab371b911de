#include "probes/judges/profile_verdict.h"

#include <fmt/format.h>

namespace daxprobe
{

MappingOutcome judgeMapping(const FaultProfile &p)
{
    const FaultCounts &c = p.counts;
    if (!p.dax) {
        std::uint64_t faults = c.minorFaults.value_or(0) + c.majorFaults.value_or(0);
        return {"page_cache",
                c.minorFaults
                    ? fmt::format("not DAX: {} faults for {} pages, served from the page cache",
                                  faults, p.pagesTouched)
                    : "not DAX: served from the page cache",
                ""};
    }
    if (!c.pmdFaults || !c.pteFaults)
        return {"unknown",
                "DAX file, but the fs_dax tracepoints could not be counted: " + c.tracepointError,
                ""};
    std::uint64_t fallbacks = c.pmdFallbacks.value_or(0);
    const std::string advice =
        "allocate files whole (fallocate, as libpmem does) on a filesystem made for 2 MiB "
        "(mkfs.xfs -d su=2m,sw=1; mkfs.ext4 -E stride=512,stripe_width=512) and map them at 2 "
        "MiB-aligned offsets";
    if (fallbacks > 0)
        return {"fallback",
                fmt::format("{} of {} 2 MiB faults fell back to 4 KiB ({} PTE faults)", fallbacks,
                            *c.pmdFaults, *c.pteFaults),
                advice};
    if (*c.pmdFaults > 0 && *c.pteFaults == 0)
        return {"pmd", fmt::format("{} faults, all 2 MiB (PMD) mappings", *c.pmdFaults), ""};
    if (*c.pmdFaults == 0 && *c.pteFaults > 0)
        return {"pte",
                fmt::format("{} faults, all 4 KiB: no 2 MiB fault was even tried "
                            "(mapping or file smaller than 2 MiB, or not PMD-aligned)",
                            *c.pteFaults),
                advice};
    if (*c.pmdFaults == 0 && *c.pteFaults == 0)
        return {"unknown", "no DAX fault was counted (pages were already mapped?)", ""};
    return {"fallback", fmt::format("{} 2 MiB and {} 4 KiB faults", *c.pmdFaults, *c.pteFaults),
            advice};
}

} // namespace daxprobe
