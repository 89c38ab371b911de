#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "base/result.h"

namespace daxprobe
{

// /proc/meminfo, values in bytes (the kernel prints kB).
using Meminfo = std::map<std::string, std::uint64_t>;

// Malformed lines are an error naming the line: a half-read meminfo would
// silently report a smaller page cache than there is.
Result<Meminfo> parseMeminfo(std::string_view text);

} // namespace daxprobe
