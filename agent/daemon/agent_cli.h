#pragma once

#include <CLI/CLI.hpp>

#include "agent/daemon/daemon.h"

namespace daxprobe
{

// Registers `daxprobe agent` on app; options land in `options`.
CLI::App *addAgentCommand(CLI::App &app, DaemonOptions &options);
// Runs the daemon with the real check and metrics until SIGTERM/SIGINT.
int runAgent(const DaemonOptions &options);

} // namespace daxprobe
