// The agent's memory of each DIMM's unsafe-shutdown count (issue 36): one
// file in its state directory, replaced whole, refused when it is not ours.
#include <catch2/catch.hpp>

#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "agent/check/shutdown_memory.h"

using namespace daxprobe;
namespace fs = std::filesystem;

namespace
{

struct TempDir {
    std::string path;
    TempDir()
    {
        std::string t = (fs::temp_directory_path() / "daxprobe-state-XXXXXX").string();
        REQUIRE(::mkdtemp(t.data()));
        path = t;
    }
    ~TempDir() { fs::remove_all(path); }
};

NdDimm dimm(const std::string &id, std::optional<std::uint64_t> count)
{
    NdDimm d;
    d.dev = "nmem0";
    d.id = id;
    d.health.shutdownCount = count;
    return d;
}

} // namespace

TEST_CASE("shutdown memory: none at first, then what the last check saw", "[agent][dimm]")
{
    TempDir dir;
    auto first = loadShutdownCounts(dir.path);
    REQUIRE(first);
    CHECK(first->empty());

    ShutdownCounts seen = updatedShutdownCounts(
        {{"gone-dimm", 7}}, {dimm("a", 42), dimm("b", std::nullopt), dimm("", 3)});
    CHECK(seen == ShutdownCounts{{"gone-dimm", 7}, {"a", 42}, {"nmem0", 3}});
    REQUIRE(saveShutdownCounts(dir.path, seen));
    auto back = loadShutdownCounts(dir.path);
    REQUIRE(back);
    CHECK(*back == seen);
    CHECK(!fs::exists(dir.path + "/dimm-shutdowns.json.new"));

    // Replaced whole, a stale .new of a check that died is no obstacle.
    std::ofstream(dir.path + "/dimm-shutdowns.json.new") << "half";
    REQUIRE(saveShutdownCounts(dir.path, {{"a", 43}}));
    CHECK(*loadShutdownCounts(dir.path) == ShutdownCounts{{"a", 43}});
}

TEST_CASE("shutdown memory: a file that is not ours is an error", "[agent][dimm]")
{
    TempDir dir;
    for (const char *bad : {"not json", "[1,2]", "{\"a\": -1}", "{\"a\": \"42\"}"}) {
        std::ofstream(dir.path + "/dimm-shutdowns.json") << bad;
        auto r = loadShutdownCounts(dir.path);
        CHECK(!r);
    }
    CHECK(!loadShutdownCounts(dir.path + "/missing-dir"));
    CHECK(!saveShutdownCounts(dir.path + "/missing-dir", {}));
}
