#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace daxprobe::protocol
{

// Cleans a peer-supplied identifier for storage and display: bounded length,
// printable ASCII only.
std::string sanitizeIdentifier(std::string_view s, std::size_t maxLen);

} // namespace daxprobe::protocol
