#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace daxprobe
{

// One command of daxprobe, as ndctl's cmd_struct: its parser, added to the
// program's, and what runs it once parsed, returning the exit status.
struct Subcommand {
    CLI::App *app = nullptr;
    std::function<int()> run;
};

} // namespace daxprobe
