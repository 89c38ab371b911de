#pragma once

#include <string>
#include <vector>

#include "base/root.h"
#include "probes/judges/profile_verdict.h"
#include "probes/readers/fault_profile.h"

namespace daxprobe
{

struct ProfileOptions {
    std::vector<std::string> paths;
    bool write = false; // write faults instead of read faults (rewrites each byte with itself)
};

// One file touched page by page, and how its mapping was served; or why it
// could not be (error).
struct PathProfile {
    std::string path;
    std::string error;
    FaultProfile profile;
    MappingOutcome mapping;
};

// Touches every page of each file through a fresh mapping and measures the
// faults it cost and how DAX served them (PMD, fallback, PTE, page cache).
// No rendering here (path_report.h).
std::vector<PathProfile> profilePaths(const Root &root, const ProfileOptions &options);

} // namespace daxprobe
