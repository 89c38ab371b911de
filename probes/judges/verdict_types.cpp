#include "probes/judges/verdict_types.h"

namespace daxprobe
{

const char *severityName(Severity s)
{
    switch (s) {
    case Severity::Ok:
        return "ok";
    case Severity::Warning:
        return "warning";
    case Severity::Problem:
        return "problem";
    }
    return "problem";
}

} // namespace daxprobe
