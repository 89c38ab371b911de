#include <cstdio>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "check_runner.h"

using namespace daxprobe;

int main(int argc, char **argv)
{
    CLI::App app{"daxprobe: is DAX really in effect in this guest, and what does it save?"};
    app.require_subcommand(1);

    CheckOptions check;
    bool json = false;
    auto *checkCmd = app.add_subcommand("check", "Verify NVDIMM regions, namespaces and DAX mounts");
    checkCmd->add_option("--path", check.paths, "Also examine these files (DAX flag, residency)");
    checkCmd->add_flag("--json", json, "One JSON document (schema daxprobe.check/1)");

    CLI11_PARSE(app, argc, argv);

    if (checkCmd->parsed()) {
        CheckOutcome out = runCheck(check);
        fmt::print("{}\n", out.report.dump(2));
        return out.exitCode;
    }
    return 2;
}
