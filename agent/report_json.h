#pragma once

#include <nlohmann/json.hpp>

#include "facts.h"
#include "verdict.h"

namespace daxprobe
{

inline constexpr const char *kCheckSchema = "daxprobe.check/1";

// The documented "daxprobe.check/1" document (agent/REPORT.md).
nlohmann::json reportToJson(const Facts &facts, const Report &report);

} // namespace daxprobe
