#pragma once

#include "agent/subcommand.h"

namespace daxprobe
{

// `daxprobe exercise PATH`: exit 0 every phase ran, 1 it failed or its file
// could not be removed, 2 bad usage (exercise_report.h).
Subcommand addExerciseCommand(CLI::App &app);

} // namespace daxprobe
