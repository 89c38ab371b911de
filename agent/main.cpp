#include <CLI/CLI.hpp>

#include "agent/check/check_command.h"
#include "agent/daemon/agent_cli.h"
#include "agent/exercise/exercise_command.h"
#include "agent/profile/profile_command.h"
#include "base/version.h"

using namespace daxprobe;

namespace
{

// The commands, in the order --help lists them (ndctl's commands[]); each
// lives in its own folder under agent/.
constexpr Subcommand (*kCommands[])(CLI::App &) = {
    addCheckCommand,
    addProfileCommand,
    addExerciseCommand,
    addAgentCommand,
};

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

    std::vector<Subcommand> commands;
    for (auto add : kCommands)
        commands.push_back(add(app));
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        int rc = app.exit(e);
        return rc == 0 ? 0 : 2;
    }
    for (const auto &c : commands)
        if (c.app->parsed())
            return c.run();
    return 2;
}
