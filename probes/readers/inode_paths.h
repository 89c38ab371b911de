#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "base/result.h"
#include "probes/readers/file_walk.h"

namespace daxprobe
{

// Where the walk found the inodes asked for.
struct InodePaths {
    std::map<std::uint64_t, std::string> paths; // inode -> absolute path (its first name)
    std::uint64_t files = 0;                    // regular files walked
    std::string stoppedEarly; // the bound that stopped the walk before all were found
};

// Finds a path of each of `inodes` (regular files) under the mount at
// `mountPoint`: no filesystem maps an inode to a name, so the shared walk
// (file_walk.h, its bounds) visits files until every inode is found.
Result<InodePaths> findInodePaths(const std::string &mountPoint, dev_t device,
                                  const std::string &deviceName,
                                  const std::set<std::uint64_t> &inodes,
                                  const FileWalkLimits &limits);

} // namespace daxprobe
