#include "agent/exercise/exercise_command.h"

#include <memory>

#include <fmt/core.h>

#include "agent/exercise/exercise_report.h"
#include "agent/json_text.h"

namespace daxprobe
{

namespace
{

struct ExerciseCli {
    ExerciseOptions exercise;
    std::string size = "32M";
    bool json = false;
};

int runExerciseCommand(ExerciseCli &cli)
{
    auto size = parseExerciseSize(cli.size);
    if (!size) {
        fmt::print(stderr, "daxprobe exercise: {}\n", size.error().describe());
        return 2;
    }
    cli.exercise.sizeBytes = *size;
    auto root = Root::open("/");
    if (!root) {
        fmt::print(stderr, "daxprobe exercise: {}\n", root.error().describe());
        return 2;
    }
    ExerciseRun run = runExercise(*root, cli.exercise);
    fmt::print("{}", cli.json ? jsonText(exerciseJson(run)) + "\n" : exerciseText(run));
    return exerciseExitCode(run);
}

} // namespace

Subcommand addExerciseCommand(CLI::App &app)
{
    auto cli = std::make_shared<ExerciseCli>();
    auto *cmd = app.add_subcommand(
        "exercise",
        "Create a file at PATH, read it, map it, write it: page-cache footprint and faults of "
        "the mount; the file is removed");
    cmd->add_option("path", cli->exercise.path, "The file to create (must not exist)")->required();
    cmd->add_option("--size", cli->size,
                    "File size, K/M/G suffixes; rounded up to 2 MiB (default 32M)");
    cmd->add_flag("--json", cli->json, "Print one JSON document (schema daxprobe.exercise/1)");
    cmd->add_flag("--no-perf", cli->exercise.noPerf, "Count faults with getrusage only");
    return {cmd, [cli] { return runExerciseCommand(*cli); }};
}

} // namespace daxprobe
