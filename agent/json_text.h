#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace daxprobe
{

// j as indented JSON text. A string (or key) that is not valid UTF-8 (a
// mount point can be any bytes) has those bytes written as \xNN, where
// nlohmann's dump() would throw.
std::string jsonText(const nlohmann::json &j, int indent = 2);

} // namespace daxprobe
