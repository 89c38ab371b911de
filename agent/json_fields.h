#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace daxprobe
{

// JSON reports say null, not 0 or "", for what was not measured.
template <typename T> nlohmann::json opt(const std::optional<T> &v)
{
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

inline nlohmann::json errorOrNull(const std::string &s)
{
    return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s);
}

} // namespace daxprobe
