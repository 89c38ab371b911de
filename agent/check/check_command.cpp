#include "agent/check/check_command.h"

#include <cstdlib>
#include <memory>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/core.h>

#include "agent/check/check_runner.h"
#include "agent/json_text.h"
#include "agent/walk_options.h"
#include "base/logging.h"

namespace daxprobe
{

namespace
{

// Colours on a terminal; "<N>" priorities when stdout is the journal (the
// check's unit), so journald files each line at its severity.
TextStyle stdoutStyle()
{
    if (::isatty(STDOUT_FILENO))
        return TextStyle::Color;
    struct stat st {
    };
    if (::fstat(STDOUT_FILENO, &st) == 0 &&
        isJournalStream(std::getenv("JOURNAL_STREAM"), st.st_dev, st.st_ino))
        return TextStyle::Journal;
    return TextStyle::Plain;
}

struct CheckCli {
    CheckOptions check;
    bool noActive = false;
};

int runCheckCommand(CheckCli &cli)
{
    CheckOptions &check = cli.check;
    check.activeChecks = !cli.noActive;
    check.style = check.json ? TextStyle::Plain : stdoutStyle();
    CheckOutcome out = runCheck(check);
    if (check.json)
        fmt::print("{}\n", jsonText(out.report));
    else
        fmt::print("{}", out.text);
    return out.exitCode;
}

} // namespace

Subcommand addCheckCommand(CLI::App &app)
{
    auto cli = std::make_shared<CheckCli>();
    CheckOptions &check = cli->check;
    auto *cmd = app.add_subcommand("check", "Verify NVDIMM regions, namespaces and DAX mounts");
    cmd->add_option("--path", check.paths,
                    "Also examine these files (DAX flag, page-cache residency)");
    cmd->add_flag("--json", check.json, "Print one JSON document (schema daxprobe.check/1)");
    cmd->add_flag("--no-active", cli->noActive, "Skip the MAP_SYNC test file on DAX mounts");
    addWalkOptions(*cmd, check.walk);
    cmd->add_option("--capture", check.captureDir,
                    "Copy every file read, plus live facts, into DIR, a new directory it makes");
    cmd->add_option("--replay", check.replayDir, "Report on a capture made with --capture");
    cmd->add_option("--state-dir", check.stateDir,
                    "Remember each DIMM's unsafe-shutdown count in DIR; a rise since the last "
                    "check is a problem");
    cmd->add_option("--root", check.root,
                    "Read /proc and /sys under this directory (no live probes)");
    return {cmd, [cli] { return runCheckCommand(*cli); }};
}

} // namespace daxprobe
