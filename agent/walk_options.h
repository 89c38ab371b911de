#pragma once

#include <CLI/CLI.hpp>

#include "probes/readers/walk_bounds.h"

namespace daxprobe
{

// --walk-files N and --walk-ms T, the bounds of the check's file walks (the
// census and the bad-block mapping), for `check` and `agent` alike. A bad
// value is CLI11's error naming the option and the range.
void addWalkOptions(CLI::App &cmd, WalkBounds &bounds);

} // namespace daxprobe
