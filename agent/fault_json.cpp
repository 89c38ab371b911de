#include "agent/fault_json.h"

#include "agent/json_fields.h"

namespace daxprobe
{

using json = nlohmann::json;

json daxFaultsJson(const FaultCounts &c)
{
    return {{"dax_pmd", opt(c.pmdFaults)},
            {"dax_pmd_fallback", opt(c.pmdFallbacks)},
            {"dax_pte", opt(c.pteFaults)},
            {"tracepoint_error", errorOrNull(c.tracepointError)}};
}

json faultsJson(const FaultNumbers &f, const FaultCounts &c)
{
    json j = {{"source", f.source},
              {"minor", f.minor},
              {"major", f.major},
              {"perf_error", f.source == "perf" ? json(nullptr) : errorOrNull(c.perfError)},
              {"perf_note", f.source == "perf" ? errorOrNull(c.perfNote) : json(nullptr)}};
    j.update(daxFaultsJson(c));
    return j;
}

} // namespace daxprobe
