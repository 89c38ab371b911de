#include "agent/check/verdict_json.h"

#include "agent/json_fields.h"

namespace daxprobe
{

nlohmann::json verdictJson(const Verdict &v)
{
    nlohmann::json ev = nlohmann::json::array();
    for (const auto &e : v.evidence)
        ev.push_back({{"check", e.check}, {"result", e.result}});
    return {{"code", v.code}, {"severity", severityName(v.severity)}, {"summary", v.summary},
            {"evidence", ev}, {"remedy", errorOrNull(v.remedy)},      {"warnings", v.warnings}};
}

} // namespace daxprobe
