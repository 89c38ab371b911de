#pragma once

#include <nlohmann/json.hpp>

#include "probes/judges/verdict.h"
#include "probes/readers/facts.h"

namespace daxprobe
{

// The documented "daxprobe.check/1" document (agent/REPORT.md).
nlohmann::json reportToJson(const Facts &facts, const Report &report);

// j as indented JSON text. A string (or key) that is not valid UTF-8 (a
// mount point can be any bytes) has those bytes written as \xNN, where
// nlohmann's dump() would throw.
std::string jsonText(const nlohmann::json &j, int indent = 2);

} // namespace daxprobe
