#pragma once

#include <nlohmann/json.hpp>

#include "probes/judges/verdict_types.h"

namespace daxprobe
{

// A Verdict as daxprobe.check/1 writes it (agent/REPORT.md, "Verdict").
nlohmann::json verdictJson(const Verdict &v);

} // namespace daxprobe
