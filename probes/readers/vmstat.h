#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace daxprobe
{

using Vmstat = std::map<std::string, std::uint64_t>;

Result<Vmstat> parseVmstat(std::string_view text);

// The counters that matter for DAX and page faults, in a stable order.
const std::vector<std::string> &vmstatFaultCounters();

} // namespace daxprobe
