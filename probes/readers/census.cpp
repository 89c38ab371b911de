#include "probes/readers/census.h"

namespace daxprobe
{

std::string_view notDaxReasonName(NotDaxReason r)
{
    switch (r) {
    case NotDaxReason::InlineTail:
        return "inline_tail";
    case NotDaxReason::Compressed:
        return "compressed";
    case NotDaxReason::Unknown:
        break;
    }
    return "unknown";
}

NotDaxReason notDaxReasonFrom(std::string_view name)
{
    if (name == "inline_tail")
        return NotDaxReason::InlineTail;
    if (name == "compressed")
        return NotDaxReason::Compressed;
    return NotDaxReason::Unknown;
}

} // namespace daxprobe
