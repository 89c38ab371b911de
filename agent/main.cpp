#include <cstdio>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "agent_cli.h"
#include "check_runner.h"
#include "profile_runner.h"

using namespace daxprobe;

// Exit codes (README "Exit codes"): 0 DAX verified, 1 problem found,
// 2 the check itself failed (also: bad command line).
int main(int argc, char **argv)
{
    CLI::App app{"daxprobe: is DAX really in effect in this guest, and what does it save?"};
    app.require_subcommand(1);

    CheckOptions check;
    bool json = false;
    bool noActive = false;
    auto *checkCmd = app.add_subcommand("check", "Verify NVDIMM regions, namespaces and DAX mounts");
    checkCmd->add_option("--path", check.paths, "Also examine these files (DAX flag, page-cache residency)");
    checkCmd->add_flag("--json", json, "Print one JSON document (schema daxprobe.check/1)");
    checkCmd->add_flag("--no-active", noActive, "Skip the MAP_SYNC test file on DAX mounts");
    checkCmd->add_option("--capture", check.captureDir, "Copy every file read, plus live facts, into DIR");
    checkCmd->add_option("--replay", check.replayDir, "Report on a capture made with --capture");
    checkCmd->add_option("--root", check.root, "Read /proc and /sys under this directory (no live probes)");

    ProfileOptions profile;
    bool profileJson = false;
    auto *profileCmd = app.add_subcommand("profile", "Count the page faults a file's mapping costs, and how DAX served them");
    profileCmd->add_option("--path", profile.paths, "File to map and touch, one byte per page")->required();
    profileCmd->add_flag("--write", profile.write, "Write faults instead of read faults (rewrites each byte with itself)");
    profileCmd->add_flag("--json", profileJson, "Print one JSON document (schema daxprobe.profile/1)");

    DaemonOptions agentOptions;
    auto *agentCmd = addAgentCommand(app, agentOptions);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        int rc = app.exit(e);
        return rc == 0 ? 0 : 2;
    }

    if (checkCmd->parsed()) {
        check.activeChecks = !noActive;
        check.color = !json && ::isatty(STDOUT_FILENO);
        CheckOutcome out = runCheck(check);
        if (json)
            fmt::print("{}\n", out.report.dump(2));
        else
            fmt::print("{}", out.text);
        return out.exitCode;
    }
    if (profileCmd->parsed()) {
        ProfileOutcome out = runProfile(profile);
        fmt::print("{}", profileJson ? out.report.dump(2) + "\n" : out.text);
        return out.exitCode;
    }
    if (agentCmd->parsed())
        return runAgent(agentOptions);
    return 2;
}
