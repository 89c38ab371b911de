#pragma once

#include "agent/subcommand.h"

namespace daxprobe
{

// `daxprobe check`: exit 0 DAX verified, 1 problem found, 2 the check itself
// failed (README "Exit codes").
Subcommand addCheckCommand(CLI::App &app);

} // namespace daxprobe
