#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace daxprobe
{

// Page-cache and fault counters now (meminfo + vmstat), for "metrics" and
// periodic reports. Never throws; unreadable files become an "errors" list.
nlohmann::json collectMetrics(const std::string &root = "/");

} // namespace daxprobe
