#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "probes/readers/badblocks.h"

namespace daxprobe
{

// Bounds on one walk: the agent runs as root on a filesystem it does not
// own, and a recheck must not take minutes.
struct WalkLimits {
    std::uint64_t maxFiles = 100000;
    std::chrono::milliseconds maxTime{5000};
    std::size_t maxExtents = 1000; // damaged pieces kept
};

// Walks the mount at `mountPoint` (which must be `dev`'s root) and asks each
// regular file for its extents (FS_IOC_FIEMAP); the pieces on `dev`'s bad
// sectors are the damage. Never follows a symlink, never leaves the mount
// (st_dev), opens nothing but regular files (no FIFO or device is opened).
BadblockScan scanBadblocks(const std::string &mountPoint, const BadblockDevice &dev,
                           const WalkLimits &limits = {});

} // namespace daxprobe
