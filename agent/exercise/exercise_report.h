#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "agent/exercise/exercise_runner.h"

namespace daxprobe
{

// schema daxprobe.exercise/1 (agent/PROFILE.md)
nlohmann::json exerciseJson(const ExerciseRun &run);
std::string exerciseText(const ExerciseRun &run);
// 0 every phase ran (whatever the footprint), 1 the exercise failed or its
// file could not be removed, 2 bad usage (an existing PATH: nothing touched).
int exerciseExitCode(const ExerciseRun &run);

} // namespace daxprobe
