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

StateDir opened(const std::string &path)
{
    auto d = openStateDir(path);
    REQUIRE(d);
    return std::move(*d);
}

} // namespace

TEST_CASE("shutdown memory: none at first, then what the last check saw", "[agent][dimm]")
{
    TempDir tmp;
    StateDir dir = opened(tmp.path);
    auto first = loadShutdownCounts(dir);
    REQUIRE(first);
    CHECK(first->empty());

    ShutdownCounts seen = updatedShutdownCounts(
        {{"gone-dimm", 7}}, {dimm("a", 42), dimm("b", std::nullopt), dimm("", 3)});
    CHECK(seen == ShutdownCounts{{"gone-dimm", 7}, {"a", 42}, {"nmem0", 3}});
    REQUIRE(saveShutdownCounts(dir, seen));
    auto back = loadShutdownCounts(dir);
    REQUIRE(back);
    CHECK(*back == seen);
    CHECK(!fs::exists(tmp.path + "/dimm-shutdowns.json.new"));

    // Replaced whole, a stale .new of a check that died is no obstacle.
    std::ofstream(tmp.path + "/dimm-shutdowns.json.new") << "half";
    REQUIRE(saveShutdownCounts(dir, {{"a", 43}}));
    CHECK(*loadShutdownCounts(dir) == ShutdownCounts{{"a", 43}});
}

TEST_CASE("shutdown memory: a file that is not ours is an error", "[agent][dimm]")
{
    TempDir tmp;
    StateDir dir = opened(tmp.path);
    for (const char *bad : {"not json", "[1,2]", "{\"a\": -1}", "{\"a\": \"42\"}"}) {
        std::ofstream(tmp.path + "/dimm-shutdowns.json") << bad;
        auto r = loadShutdownCounts(dir);
        CHECK(!r);
    }
    fs::remove(tmp.path + "/dimm-shutdowns.json");
    fs::create_directory(tmp.path + "/dimm-shutdowns.json");
    CHECK(!loadShutdownCounts(dir)); // a directory in its place is no file of ours
    CHECK(!openStateDir(tmp.path + "/missing-dir"));
}

// Issue 45, item 3: the load and the save once resolved the path each; a
// symlink swapped in between sent the save (with counts read elsewhere)
// into the directory it pointed to.
TEST_CASE("shutdown memory: the save goes where the load read, whatever the path names now",
          "[agent][dimm]")
{
    TempDir tmp;
    const std::string state = tmp.path + "/state", other = tmp.path + "/other";
    fs::create_directory(state);
    fs::create_directory(other);
    StateDir dir = opened(state);
    REQUIRE(loadShutdownCounts(dir));
    fs::rename(state, tmp.path + "/state.old");
    fs::create_directory_symlink(other, state);
    REQUIRE(saveShutdownCounts(dir, {{"a", 1}}));
    CHECK(fs::is_empty(other));
    CHECK(fs::exists(tmp.path + "/state.old/dimm-shutdowns.json"));
}

TEST_CASE("shutdown memory: a state directory others may write is refused", "[agent][dimm]")
{
    TempDir tmp;
    fs::permissions(tmp.path, fs::perms::others_write, fs::perm_options::add);
    auto r = openStateDir(tmp.path);
    REQUIRE(!r);
    CHECK(r.error().code == EACCES);
    fs::permissions(tmp.path, fs::perms::others_write, fs::perm_options::remove);
    CHECK(openStateDir(tmp.path));
}
