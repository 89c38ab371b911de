#include "probes/readers/vmstat.h"

#include <cerrno>

#include "probes/readers/text_util.h"

namespace daxprobe
{

Result<Vmstat> parseVmstat(std::string_view text)
{
    Vmstat out;
    int lineNo = 0;
    for (std::string_view line : splitLines(text)) {
        ++lineNo;
        if (trim(line).empty())
            continue;
        auto fields = splitFields(line);
        if (fields.size() != 2)
            return failf(EINVAL, "vmstat line {}: expected '<name> <count>'", lineNo);
        auto value = parseU64(fields[1]);
        if (!value) {
            // A few gauges (nr_*) can go transiently negative in per-cpu sums.
            if (parseI64(fields[1]))
                value = 0;
            else
                return failf(EINVAL, "vmstat line {}: not a number", lineNo);
        }
        out[std::string(fields[0])] = *value;
    }
    if (out.empty())
        return fail("vmstat: empty", EINVAL);
    return out;
}

const std::vector<std::string> &vmstatFaultCounters()
{
    static const std::vector<std::string> names = {
        "pgfault",         "pgmajfault",    "thp_fault_alloc", "thp_fault_fallback",
        "thp_file_mapped", "thp_split_pmd", "nr_file_pages",   "nr_mapped",
        "nr_dirty",        "nr_writeback",  "pgpgin",          "pgpgout",
    };
    return names;
}

} // namespace daxprobe
