#pragma once

#include <ctime>

namespace daxprobe
{

// Seconds on the monotonic clock, for the durations the reports give.
inline double monotonicSeconds()
{
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

} // namespace daxprobe
