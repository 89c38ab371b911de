#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "collector/options.h"

namespace daxprobe::collector
{

// What `daxprobe-collector run` is given on its command line.
struct RunArgs {
    CollectorOptions options;
    std::vector<std::string> sockets; // [NAME=]PATH
    std::string config;
    std::string logLevel = "info";
};

// The `run` subcommand and its options: one table, registered by
// daxprobe-collector (for --help, --help-all and the man page) and by the
// daemon it execs, which parses them.
CLI::App *addRunCommand(CLI::App &app, RunArgs &args);

// Checks a numeric option against its range (option_ranges.h): the same
// table the config file is checked against.
CLI::Validator inRange(std::string_view name);

} // namespace daxprobe::collector
