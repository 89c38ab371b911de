#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "agent/check/check_runner.h"

using namespace daxprobe;
namespace fs = std::filesystem;

namespace
{

std::vector<fs::path> scenarios()
{
    std::vector<fs::path> out;
    for (const auto &e : fs::directory_iterator(FIXTURES_DIR))
        if (e.is_directory() && fs::exists(e.path() / "live.json"))
            out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
}

nlohmann::json readJson(const fs::path &p)
{
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return nlohmann::json::parse(ss.str(), nullptr, false);
}

// The version changes with every release; nothing else in a replay may.
nlohmann::json stable(nlohmann::json j)
{
    j.erase("daxprobe_version");
    return j;
}

} // namespace

TEST_CASE("every captured guest scenario replays to its golden report", "[fixtures][golden]")
{
    // Goldens are rewritten only by `meson compile -C build update-goldens`;
    // a test run that was asked to rewrite them must not pass as a test run.
    if (std::getenv("DAXPROBE_UPDATE_GOLDEN"))
        FAIL("DAXPROBE_UPDATE_GOLDEN is set: the test suite never rewrites goldens; run "
             "`meson compile -C build update-goldens`, review the diff, then run the tests");
    auto dirs = scenarios();
    REQUIRE_FALSE(dirs.empty()); // fixtures are part of the tree: none means a broken checkout
    for (const auto &dir : dirs) {
        CheckOptions options;
        options.replayDir = dir.string();
        options.json = true;
        CheckOutcome out = runCheck(options);
        nlohmann::json got = stable(out.report);
        fs::path golden = dir / "expected.json";
        INFO("scenario " << dir.filename().string()
                         << " (`meson compile -C build update-goldens` rewrites goldens)");
        REQUIRE(fs::exists(golden));
        nlohmann::json want = stable(readJson(golden));
        INFO("diff: " << nlohmann::json::diff(want, got).dump());
        CHECK(got == want);
        CHECK(out.exitCode == want.value("exit_code", -1));
    }
}

TEST_CASE("a check renders only the form asked for", "[fixtures][render]")
{
    // The daemon asks for JSON and the terminal for text: neither pays for
    // the other (issue 32).
    auto dirs = scenarios();
    REQUIRE_FALSE(dirs.empty());
    CheckOptions options;
    options.replayDir = dirs.front().string();
    options.json = true;
    CheckOutcome json = runCheck(options);
    CHECK(json.report.is_object());
    CHECK(json.text.empty());
    options.json = false;
    CheckOutcome text = runCheck(options);
    CHECK(text.report.is_null());
    CHECK_THAT(text.text, Catch::StartsWith("daxprobe check"));
    CHECK(text.exitCode == json.exitCode);

    options.replayDir = (dirs.front() / "no-such-capture").string();
    CheckOutcome failed = runCheck(options);
    CHECK(failed.report.is_null());
    CHECK_THAT(failed.text, Catch::StartsWith("daxprobe check failed: "));
    CHECK(failed.exitCode == 2);
}
