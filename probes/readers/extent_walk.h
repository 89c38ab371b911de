#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "probes/readers/badblocks.h"

namespace daxprobe
{

// Bounds on the bad-block walk: the shared walk's (file_walk.h) and the
// damaged pieces kept.
struct WalkLimits {
    std::uint64_t maxFiles = 100000;
    std::chrono::milliseconds maxTime{5000};
    std::size_t maxExtents = 1000; // damaged pieces kept
};

// Walks the mount at `mountPoint` (which must be `dev`'s root) with the
// shared walk (file_walk.h) and asks each regular file for its extents
// (FS_IOC_FIEMAP); the pieces on `dev`'s bad sectors are the damage.
BadblockScan scanBadblocks(const std::string &mountPoint, const BadblockDevice &dev,
                           const WalkLimits &limits = {});

} // namespace daxprobe
