#pragma once

#include <nlohmann/json.hpp>

#include "probes/readers/facts.h"

namespace daxprobe
{

// The live-only part, for capture (--capture) and replay (--replay).
nlohmann::json liveFactsToJson(const Facts &facts);
void liveFactsFromJson(const nlohmann::json &j, Facts &facts);

} // namespace daxprobe
