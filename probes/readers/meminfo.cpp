#include "probes/readers/meminfo.h"

#include <cerrno>

#include "probes/readers/text_util.h"

namespace daxprobe
{

Result<Meminfo> parseMeminfo(std::string_view text)
{
    Meminfo out;
    int lineNo = 0;
    for (std::string_view line : splitLines(text)) {
        ++lineNo;
        if (trim(line).empty())
            continue;
        auto colon = line.find(':');
        if (colon == std::string_view::npos || colon == 0)
            return failf(EINVAL, "meminfo line {}: no 'Name:'", lineNo);
        auto fields = splitFields(line.substr(colon + 1));
        if (fields.empty() || fields.size() > 2 || (fields.size() == 2 && fields[1] != "kB"))
            return failf(EINVAL, "meminfo line {}: expected '<number> [kB]'", lineNo);
        auto value = parseU64(fields[0]);
        if (!value)
            return failf(EINVAL, "meminfo line {}: not a number", lineNo);
        std::uint64_t scale = fields.size() == 2 ? 1024 : 1; // HugePages_* are counts
        if (*value > UINT64_MAX / scale)
            return failf(ERANGE, "meminfo line {}: value overflows", lineNo);
        out[std::string(line.substr(0, colon))] = *value * scale;
    }
    if (out.empty())
        return fail("meminfo: empty", EINVAL);
    return out;
}

} // namespace daxprobe
