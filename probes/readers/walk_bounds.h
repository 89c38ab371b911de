#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

namespace daxprobe
{

// The user's bounds on a check's file walks (`check --walk-files/--walk-ms`):
// the census and the bad-block mapping each keep their own default for a
// bound not given.
struct WalkBounds {
    std::optional<std::uint64_t> files;
    std::optional<std::chrono::milliseconds> time;
};

// A walk's own limits (CensusLimits, WalkLimits) with the user's bounds over
// them.
template <typename Limits> Limits boundedBy(Limits limits, const WalkBounds &bounds)
{
    if (bounds.files)
        limits.maxFiles = *bounds.files;
    if (bounds.time)
        limits.maxTime = *bounds.time;
    return limits;
}

} // namespace daxprobe
