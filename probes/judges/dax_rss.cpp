#include "probes/judges/dax_rss.h"

#include <algorithm>

#include <fmt/format.h>

namespace daxprobe
{

std::optional<DaxRssNote> judgeDaxRss(const FaultCounts &c, std::uint64_t peakRssKb)
{
    constexpr std::uint64_t kPmd = 2ull << 20, kPte = 4096;
    std::uint64_t pmd = c.pmdFaults.value_or(0);
    std::uint64_t fellBack = std::min(pmd, c.pmdFallbacks.value_or(0));
    std::uint64_t pte = c.pteFaults.value_or(0);
    if (pmd - fellBack == 0 && pte == 0)
        return std::nullopt;
    DaxRssNote n;
    n.daxFaults = pmd - fellBack + pte;
    n.mappedBytesUpTo = (pmd - fellBack) * kPmd + pte * kPte;
    // Said only when the numbers show it: a peak RSS of half of what DAX
    // mapped or more may count the pages (a kernel that does, or a command
    // that faulted each page twice), so nothing is claimed then.
    if (peakRssKb * 1024 >= n.mappedBytesUpTo / 2)
        return std::nullopt;
    n.text = fmt::format(
        "peak RSS ({} kB) leaves out what the command mapped through DAX ({} DAX fault(s): up to "
        "{:.1f} MiB): those pages are the namespace's, not RAM, and the kernel does not count "
        "them in RSS",
        peakRssKb, n.daxFaults, static_cast<double>(n.mappedBytesUpTo) / (1 << 20));
    return n;
}

} // namespace daxprobe
