// Rewrites tests/fixtures/<scenario>/expected.json from a replay of each
// capture. A separate command (`meson compile -C build update-goldens`), never
// part of a test run: the golden test cannot pass by rewriting what it checks.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "agent/check/check_runner.h"

using namespace daxprobe;
namespace fs = std::filesystem;

int main(int argc, char **argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s FIXTURES_DIR\n", argv[0]);
        return 2;
    }
    std::vector<fs::path> dirs;
    for (const auto &e : fs::directory_iterator(argv[1]))
        if (e.is_directory() && fs::exists(e.path() / "live.json"))
            dirs.push_back(e.path());
    std::sort(dirs.begin(), dirs.end());
    if (dirs.empty()) {
        std::fprintf(stderr, "no captures under %s\n", argv[1]);
        return 1;
    }
    for (const auto &dir : dirs) {
        CheckOptions options;
        options.replayDir = dir.string();
        options.json = true;
        CheckOutcome out = runCheck(options);
        std::ofstream(dir / "expected.json") << out.report.dump(2) << "\n";
        std::printf("rewrote %s (exit code %d)\n", (dir / "expected.json").c_str(), out.exitCode);
    }
    std::printf("review with `git diff tests/fixtures`, then run the tests\n");
    return 0;
}
