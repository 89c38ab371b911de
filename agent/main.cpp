#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "agent/check_runner.h"
#include "agent/command_report.h"
#include "agent/daemon/agent_cli.h"
#include "agent/exercise_report.h"
#include "agent/profile_runner.h"
#include "agent/report_json.h"
#include "base/logging.h"
#include "base/result.h"
#include "base/safe_files.h"
#include "base/version.h"
#include "protocol/verdicts.h"

using namespace daxprobe;

namespace
{

// --output is opened before anything runs: a command that ran with nowhere
// to put its result is lost work. Opened as a shell's `>` would, but never
// through another user's symlink or file in /tmp (base/safe_files.h).
bool openOutput(const std::string &outputPath, UniqueFD &f)
{
    if (outputPath.empty())
        return true;
    auto fd = openForRedirect(outputPath);
    if (!fd) {
        fmt::print(stderr, "daxprobe profile: cannot write {}: {}; nothing was run\n", outputPath,
                   fd.error().describe());
        return false;
    }
    f = std::move(*fd);
    return true;
}

// The report goes to stdout, or to --output so it cannot mix with the
// profiled command's own output.
bool emit(const std::string &text, const std::string &outputPath, UniqueFD &f)
{
    if (outputPath.empty()) {
        fmt::print("{}", text);
        return true;
    }
    auto w = writeAll(f.get(), text, outputPath);
    if (w && ::close(f.release()) != 0)
        w = failf(errno, "close {}", outputPath);
    if (!w) {
        fmt::print(stderr, "daxprobe profile: cannot write {}: {}\n", outputPath,
                   w.error().describe());
        return false;
    }
    return true;
}

// Exit status: the command's own (128+N for signal N), 127/126 when it could
// not be executed, 2 when daxprobe could not start it or write the report.
int profileCommand(const CommandProfileOptions &options, bool json, const std::string &outputPath)
{
    auto root = Root::open("/");
    if (!root) {
        fmt::print(stderr, "daxprobe profile: {}\n", root.error().describe());
        return 2;
    }
    UniqueFD out;
    if (!openOutput(outputPath, out))
        return 2;
    CommandRun run = profileCommand(*root, options);
    std::string text =
        json
            ? jsonText({{"schema", protocol::kProfileSchema}, {"command", commandJson(run)}}) + "\n"
            : commandText(run);
    if (!emit(text, outputPath, out))
        return 2;
    return commandExitCode(run);
}

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

} // namespace

// Exit codes (README "Exit codes"): 0 DAX verified, 1 problem found,
// 2 the check itself failed (also: bad command line).
int main(int argc, char **argv)
{
    CLI::App app{"daxprobe: is DAX really in effect in this guest, and what does it save?",
                 "daxprobe"};
    app.require_subcommand(1);
    app.set_version_flag("--version", versionString());
    app.set_help_all_flag("--help-all", "Show the options of every subcommand");

    CheckOptions check;
    bool json = false;
    bool noActive = false;
    auto *checkCmd =
        app.add_subcommand("check", "Verify NVDIMM regions, namespaces and DAX mounts");
    checkCmd->add_option("--path", check.paths,
                         "Also examine these files (DAX flag, page-cache residency)");
    checkCmd->add_flag("--json", json, "Print one JSON document (schema daxprobe.check/1)");
    checkCmd->add_flag("--no-active", noActive, "Skip the MAP_SYNC test file on DAX mounts");
    checkCmd->add_option(
        "--capture", check.captureDir,
        "Copy every file read, plus live facts, into DIR, a new directory it makes");
    checkCmd->add_option("--replay", check.replayDir, "Report on a capture made with --capture");
    checkCmd->add_option("--root", check.root,
                         "Read /proc and /sys under this directory (no live probes)");

    ProfileOptions profile;
    CommandProfileOptions command;
    bool profileJson = false;
    std::string profileOutput;
    auto *profileCmd = app.add_subcommand(
        "profile",
        "Profile a command (-- CMD ARGS...), or a file's mapping (--path FILE): page faults, "
        "DAX PMD/PTE faults, page-cache growth");
    profileCmd->add_option("--path", profile.paths,
                           "Without a command: file to map and touch, one byte per page. With one: "
                           "file whose page-cache residency is measured before and after");
    profileCmd->add_flag("--write", profile.write,
                         "Write faults instead of read faults (rewrites each byte with itself)");
    profileCmd->add_flag("--json", profileJson,
                         "Print one JSON document (schema daxprobe.profile/1)");
    profileCmd->add_flag(
        "--no-perf", command.noPerf,
        "With a command: count with rusage and /proc/vmstat only, as when perf is not permitted");
    profileCmd->add_option("-o,--output", profileOutput,
                           "Write the report to this file, not stdout (as `>` would, but never "
                           "to another user's name in /tmp or another sticky directory)");
    profileCmd->add_option("command", command.argv, "The command to run, after --");

    ExerciseOptions exercise;
    std::string exerciseSize = "32M";
    bool exerciseJsonOut = false;
    auto *exerciseCmd = app.add_subcommand(
        "exercise",
        "Create a file at PATH, read it, map it, write it: page-cache footprint and faults of "
        "the mount; the file is removed");
    exerciseCmd->add_option("path", exercise.path, "The file to create (must not exist)")
        ->required();
    exerciseCmd->add_option("--size", exerciseSize,
                            "File size, K/M/G suffixes; rounded up to 2 MiB (default 32M)");
    exerciseCmd->add_flag("--json", exerciseJsonOut,
                          "Print one JSON document (schema daxprobe.exercise/1)");
    exerciseCmd->add_flag("--no-perf", exercise.noPerf, "Count faults with getrusage only");

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
        check.json = json;
        check.style = json ? TextStyle::Plain : stdoutStyle();
        CheckOutcome out = runCheck(check);
        if (json)
            fmt::print("{}\n", jsonText(out.report));
        else
            fmt::print("{}", out.text);
        return out.exitCode;
    }
    if (profileCmd->parsed()) {
        if (!command.argv.empty()) {
            if (profile.write) {
                fmt::print(stderr,
                           "daxprobe profile: --write only applies to --path without a command\n");
                return 2;
            }
            command.paths = profile.paths;
            return profileCommand(command, profileJson, profileOutput);
        }
        if (profile.paths.empty()) {
            fmt::print(stderr, "daxprobe profile: give -- CMD ARGS... or --path FILE\n");
            return 2;
        }
        UniqueFD file;
        if (!openOutput(profileOutput, file))
            return 2;
        ProfileOutcome out = runProfile(profile);
        if (!emit(profileJson ? jsonText(out.report) + "\n" : out.text, profileOutput, file))
            return 2;
        return out.exitCode;
    }
    if (exerciseCmd->parsed()) {
        auto size = parseExerciseSize(exerciseSize);
        if (!size) {
            fmt::print(stderr, "daxprobe exercise: {}\n", size.error().describe());
            return 2;
        }
        exercise.sizeBytes = *size;
        auto root = Root::open("/");
        if (!root) {
            fmt::print(stderr, "daxprobe exercise: {}\n", root.error().describe());
            return 2;
        }
        ExerciseRun run = runExercise(*root, exercise);
        fmt::print("{}", exerciseJsonOut ? jsonText(exerciseJson(run)) + "\n" : exerciseText(run));
        return exerciseExitCode(run);
    }
    if (agentCmd->parsed())
        return runAgent(agentOptions);
    return 2;
}
