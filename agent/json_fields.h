#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "base/evidence_state.h"

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

// The error of a check that failed, else null (skipped and observed checks
// say their text elsewhere, or not at all).
inline nlohmann::json failureOrNull(const EvidenceOutcome &e)
{
    return e.failed() ? nlohmann::json(e.text) : nlohmann::json(nullptr);
}

} // namespace daxprobe
