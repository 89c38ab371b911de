#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace daxprobe
{

struct ProfileOptions {
    std::vector<std::string> paths;
    bool write = false; // write faults instead of read faults (rewrites each byte with itself)
};

struct ProfileOutcome {
    nlohmann::json report; // schema daxprobe.profile/1
    std::string text;
    int exitCode = 2; // 0 measured, 1 some file could not be profiled, 2 bad usage
};

// Touches every page of each file through a fresh mapping and reports the
// faults it cost and how DAX served them (PMD, fallback, PTE, page cache).
ProfileOutcome runProfile(const ProfileOptions &options);

} // namespace daxprobe
