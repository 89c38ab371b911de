#pragma once

#include "agent/subcommand.h"

namespace daxprobe
{

// `daxprobe profile -- CMD` (exit: the command's own) or `--path FILE`
// (exit: path_report.h); 2 when daxprobe could not run it or write the report.
Subcommand addProfileCommand(CLI::App &app);

} // namespace daxprobe
