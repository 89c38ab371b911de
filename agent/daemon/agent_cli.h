#pragma once

#include "agent/daemon/daemon.h"
#include "agent/subcommand.h"

namespace daxprobe
{

// `daxprobe agent`: runs until stopped (runAgent).
Subcommand addAgentCommand(CLI::App &app);
// Runs the daemon with the real check and metrics until SIGTERM/SIGINT.
int runAgent(const DaemonOptions &options);

} // namespace daxprobe
