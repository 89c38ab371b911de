#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/profile/path_profile.h"

namespace daxprobe
{

// schema daxprobe.profile/1 with its "files" (agent/PROFILE.md).
nlohmann::json pathsJson(const std::vector<PathProfile> &profiles);
// The same for people: a few lines per file.
std::string pathsText(const std::vector<PathProfile> &profiles);
// 0 every file measured, 1 some file could not be profiled.
int pathsExitCode(const std::vector<PathProfile> &profiles);

} // namespace daxprobe
