#pragma once

#include <string>

#include "probes/readers/badblocks.h"
#include "probes/readers/extent_walk.h"

namespace daxprobe
{

// The owners of `dev`'s bad sectors under the mount at `mountPoint` (its
// root): GETFSMAP's answer where it names an owner for every bad byte (XFS
// with rmapbt), the inodes' paths then found by a bounded walk
// (inode_paths.h); otherwise (ext4, XFS without rmapbt: FMR_OWN_UNKNOWN for
// data in use; no GETFSMAP) the FIEMAP walk (extent_walk.h). Free space and
// metadata are named from GETFSMAP either way.
BadblockScan findBadblockOwners(const std::string &mountPoint, const BadblockDevice &dev,
                                const WalkLimits &limits = {});

} // namespace daxprobe
