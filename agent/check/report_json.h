#pragma once

#include <nlohmann/json.hpp>

#include "probes/judges/verdict.h"

namespace daxprobe
{

// The documented "daxprobe.check/1" document (agent/REPORT.md).
nlohmann::json reportToJson(const Report &report);

} // namespace daxprobe
