#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "agent/profile/command_profile.h"

namespace daxprobe
{

// The "command" object of daxprobe.profile/1 (agent/PROFILE.md).
nlohmann::json commandJson(const CommandRun &run);
// The same for people: a few aligned lines, the fallback said in words.
std::string commandText(const CommandRun &run);
// The exit status `daxprobe profile -- CMD` ends with: the command's own
// (128+N for a signal N), 127/126 when it could not be executed, 2 when
// daxprobe could not start it.
int commandExitCode(const CommandRun &run);

} // namespace daxprobe
