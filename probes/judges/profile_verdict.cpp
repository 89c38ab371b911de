#include "probes/judges/profile_verdict.h"

#include <fmt/format.h>

namespace daxprobe
{

namespace
{

// What the file's own filesystem can do about 2 MiB mappings, and nothing
// from another filesystem's mkfs.
std::string pmdAdvice(const std::string &fstype)
{
    const char *whole = "allocate files whole (fallocate, as libpmem does)";
    const char *aligned = "and map them at 2 MiB-aligned offsets";
    if (fstype == "xfs")
        return fmt::format("{} on an XFS made for 2 MiB (mkfs.xfs -d su=2m,sw=1) {}", whole,
                           aligned);
    if (fstype == "ext4")
        return fmt::format("{} on an ext4 made for 2 MiB (mkfs.ext4 -E "
                           "stride=512,stripe_width=512) {}",
                           whole, aligned);
    // Measured (shared/cxl-testbed.md): every 2 MiB fault on EROFS fell back.
    if (fstype == "erofs")
        return "EROFS packs file data in 4 KiB blocks without 2 MiB alignment, and mkfs.erofs "
               "(1.5) has no option to align it: 4 KiB DAX mappings are what an EROFS image "
               "gives (still without a page cache copy)";
    return fmt::format("{} {}", whole, aligned);
}

// 2 MiB faults that fell back: the device when every piece of the file is
// ready (a PMD fault on a ready piece fails only in the driver: fs/dax.c
// asks it for 2 MiB and gets less), else the file's layout. Fallbacks are
// not compared with unready pieces: 6.12 and 7.2 fault a piece twice (32
// fallbacks for 16 unready pieces, raw-xfs-6.12 and -sid), 6.1 once.
MappingOutcome fallbackOutcome(const FaultProfile &p, std::uint64_t fallbacks)
{
    const FaultCounts &c = p.counts;
    const PmdLayout &l = p.layout;
    std::string summary = fmt::format("{} of {} 2 MiB faults fell back to 4 KiB ({} PTE faults)",
                                      fallbacks, *c.pmdFaults, *c.pteFaults);
    const std::uint64_t unready = l.pieces - l.ready;
    if (p.device.servesOnePageAtATime() || (l.observed && l.pieces > 0 && unready == 0)) {
        summary += fmt::format(", though {} of the file's {} 2 MiB pieces lie on 2 MiB-aligned "
                               "device extents: the device served them 4 KiB at a time",
                               l.ready, l.pieces);
        if (p.device.servesOnePageAtATime())
            summary += fmt::format(" ({} on {}: nfit_test's vmalloc()ed memory, handed out one "
                                   "page at a time; no file layout or namespace setting "
                                   "changes that)",
                                   p.device.ns, p.device.provider);
        return {"fallback", summary, "", "device"};
    }
    if (!l.observed)
        return {"fallback", summary + " (the file's extents could not be read)",
                pmdAdvice(p.fstype), ""};
    summary += fmt::format(": {} of the file's {} 2 MiB pieces are not on 2 MiB-aligned device "
                           "extents",
                           unready, l.pieces);
    // The filesystem itself starts off the grid: no file layout helps.
    if (p.device.memoryOffset != 0)
        return {"fallback",
                summary + fmt::format(" of physical memory: the filesystem on {} starts {} KiB "
                                      "off a 2 MiB boundary",
                                      p.device.blockdev, p.device.memoryOffset / 1024),
                fmt::format("start the partition on a 2 MiB boundary of memory, {} KiB later "
                            "(where the image is built: its partition table)",
                            (kPmdSize - p.device.memoryOffset) / 1024),
                "layout"};
    return {"fallback", summary, pmdAdvice(p.fstype), "layout"};
}

} // namespace

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
    const std::string advice = pmdAdvice(p.fstype);
    if (fallbacks > 0)
        return fallbackOutcome(p, fallbacks);
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
    // No 2 MiB fault fell back: the 4 KiB ones served what no 2 MiB mapping
    // could cover (a tail short of 2 MiB, an unaligned end of the mapping).
    return {"pmd",
            fmt::format("{} 2 MiB faults, none fell back; {} 4 KiB faults for what no 2 MiB "
                        "mapping covers (a tail short of 2 MiB, an unaligned end)",
                        *c.pmdFaults, *c.pteFaults),
            ""};
}

} // namespace daxprobe
