#include "agent/profile/profile_command.h"

#include <cerrno>
#include <memory>
#include <unistd.h>

#include <fmt/core.h>

#include "agent/json_text.h"
#include "agent/profile/command_report.h"
#include "agent/profile/path_report.h"
#include "base/safe_files.h"
#include "protocol/verdicts.h"

namespace daxprobe
{

namespace
{

struct ProfileCli {
    ProfileOptions paths;
    CommandProfileOptions command;
    bool json = false;
    std::string output;
};

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
int runCommandProfile(const ProfileCli &cli)
{
    auto root = Root::open("/");
    if (!root) {
        fmt::print(stderr, "daxprobe profile: {}\n", root.error().describe());
        return 2;
    }
    UniqueFD out;
    if (!openOutput(cli.output, out))
        return 2;
    CommandRun run = profileCommand(*root, cli.command);
    std::string text =
        cli.json
            ? jsonText({{"schema", protocol::kProfileSchema}, {"command", commandJson(run)}}) + "\n"
            : commandText(run);
    if (!emit(text, cli.output, out))
        return 2;
    return commandExitCode(run);
}

int runPathProfile(const ProfileCli &cli)
{
    auto root = Root::open("/");
    if (!root) {
        fmt::print(stderr, "daxprobe profile: {}\n", root.error().describe());
        return 2;
    }
    UniqueFD out;
    if (!openOutput(cli.output, out))
        return 2;
    std::vector<PathProfile> profiles = profilePaths(*root, cli.paths);
    if (!emit(cli.json ? jsonText(pathsJson(profiles)) + "\n" : pathsText(profiles), cli.output,
              out))
        return 2;
    return pathsExitCode(profiles);
}

int runProfileCommand(ProfileCli &cli)
{
    if (!cli.command.argv.empty()) {
        if (cli.paths.write) {
            fmt::print(stderr,
                       "daxprobe profile: --write only applies to --path without a command\n");
            return 2;
        }
        cli.command.paths = cli.paths.paths;
        return runCommandProfile(cli);
    }
    if (cli.paths.paths.empty()) {
        fmt::print(stderr, "daxprobe profile: give -- CMD ARGS... or --path FILE\n");
        return 2;
    }
    return runPathProfile(cli);
}

} // namespace

Subcommand addProfileCommand(CLI::App &app)
{
    auto cli = std::make_shared<ProfileCli>();
    auto *cmd = app.add_subcommand(
        "profile",
        "Profile a command (-- CMD ARGS...), or a file's mapping (--path FILE): page faults, "
        "DAX PMD/PTE faults, page-cache growth");
    cmd->add_option("--path", cli->paths.paths,
                    "Without a command: file to map and touch, one byte per page. With one: "
                    "file whose page-cache residency is measured before and after");
    cmd->add_flag("--write", cli->paths.write,
                  "Write faults instead of read faults (rewrites each byte with itself)");
    cmd->add_flag("--json", cli->json, "Print one JSON document (schema daxprobe.profile/1)");
    cmd->add_flag(
        "--no-perf", cli->command.noPerf,
        "With a command: count with rusage and /proc/vmstat only, as when perf is not permitted");
    cmd->add_option("-o,--output", cli->output,
                    "Write the report to this file, not stdout (as `>` would, but never "
                    "to another user's name in /tmp or another sticky directory)");
    cmd->add_option("command", cli->command.argv, "The command to run, after --");
    return {cmd, [cli] { return runProfileCommand(*cli); }};
}

} // namespace daxprobe
