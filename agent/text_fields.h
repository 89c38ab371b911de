#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace daxprobe
{

// Human reports print a count, or `missing` for what was not measured (the
// JSON reports say null: agent/json_fields.h).
inline std::string countOr(const std::optional<std::uint64_t> &v, const char *missing = "?")
{
    return v ? std::to_string(*v) : missing;
}

} // namespace daxprobe
