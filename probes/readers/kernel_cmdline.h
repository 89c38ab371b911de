#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace daxprobe
{

// The value of `key=` on a kernel command line (/proc/cmdline), as the
// kernel takes it: the last occurrence wins, double quotes group spaces.
std::optional<std::string> kernelParam(std::string_view cmdline, std::string_view key);

} // namespace daxprobe
