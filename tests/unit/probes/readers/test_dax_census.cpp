// The census on the build machine's own filesystem: no file there is DAX,
// so every regular file is an exception, checked against statx(2) itself;
// the walk is the bad-block mapping's (links, FIFOs, bounds), and says
// where it stopped.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/statx_dax.h"
#include "probes/readers/dax_census.h"

using namespace daxprobe;
namespace fs = std::filesystem;

namespace
{

struct CensusDir {
    fs::path dir;
    CensusDir()
    {
        char tmpl[] = "/var/tmp/daxprobe-census-XXXXXX";
        dir = ::mkdtemp(tmpl);
    }
    ~CensusDir() { fs::remove_all(dir); }
};

void writeBytes(const fs::path &p, std::size_t bytes)
{
    std::ofstream(p, std::ios::binary) << std::string(bytes, 'x');
}

// The kernel's own answer for one file.
bool kernelSaysDax(const fs::path &p)
{
    struct statx sx {
    };
    REQUIRE(::statx(AT_FDCWD, p.c_str(), AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &sx) == 0);
    return (sx.stx_attributes & kStatxAttrDax) != 0;
}

DaxCensus censusOf(const fs::path &dir, const CensusLimits &limits = {})
{
    struct stat st {
    };
    REQUIRE(::stat(dir.c_str(), &st) == 0);
    return takeDaxCensus(dir, ::major(st.st_dev), ::minor(st.st_dev), limits);
}

} // namespace

TEST_CASE("the census counts every regular file once and names the ones not DAX", "[census]")
{
    CensusDir t;
    fs::create_directories(t.dir / "sub");
    writeBytes(t.dir / "small", 10);
    writeBytes(t.dir / "sub" / "blocks", 8192);
    writeBytes(t.dir / "tail", 5000);
    REQUIRE(::mkfifo((t.dir / "fifo").c_str(), 0600) == 0);
    fs::create_symlink("/etc", t.dir / "etc-link");
    fs::create_hard_link(t.dir / "tail", t.dir / "second-name");
    for (const char *f : {"small", "sub/blocks", "tail"})
        REQUIRE_FALSE(kernelSaysDax(t.dir / f)); // the premise: not a DAX filesystem

    DaxCensus c = censusOf(t.dir);
    REQUIRE(c.observed());
    CHECK(c.files == 3);
    CHECK(c.daxFiles == 0);
    CHECK(c.inlineTail + c.compressed + c.unknown == 3);
    CHECK(c.stoppedEarly.empty());
    REQUIRE(c.exceptions.size() == 3);
    std::set<std::string> named;
    for (const auto &e : c.exceptions)
        named.insert(e.path);
    CHECK(named.count((t.dir / "small").string()));
    CHECK(named.count((t.dir / "sub" / "blocks").string()));
    // One file, two names: named once, by either.
    CHECK(named.count((t.dir / "tail").string()) + named.count((t.dir / "second-name").string()) ==
          1);

    SECTION("a few are named, all are counted")
    {
        DaxCensus few = censusOf(t.dir, {.maxNamed = 1});
        CHECK(few.exceptions.size() == 1);
        CHECK(few.notDax() == 3);
    }
    SECTION("over the file bound it samples, and says so")
    {
        DaxCensus one = censusOf(t.dir, {.maxFiles = 1});
        CHECK(one.files == 1);
        CHECK(one.seen == 4); // names: the second name of tail counts too
        // 1 in 2 or 1 in 4: the second name met, whichever readdir gives
        // later, is not visited again.
        CHECK_THAT(one.sampled, Catch::StartsWith("1 in ") && Catch::EndsWith("at most 1"));
        CHECK(one.stoppedEarly.empty());
    }
    SECTION("the time bound stops it and says so")
    {
        DaxCensus none = censusOf(t.dir, {.maxTime = std::chrono::milliseconds(0)});
        CHECK(none.files == 0);
        CHECK_THAT(none.stoppedEarly, Catch::StartsWith("stopped after 0 ms"));
    }
}

TEST_CASE("a sampled census examines files from the whole tree, not its first files", "[census]")
{
    CensusDir t;
    // Breadth-first: a/ then b/ then c/, 40 files each; at most 10 examined.
    for (const char *d : {"a", "b", "c"}) {
        fs::create_directories(t.dir / d);
        for (int i = 0; i < 40; ++i)
            writeBytes(t.dir / d / std::to_string(i), 1);
    }
    DaxCensus c = censusOf(t.dir, {.maxFiles = 10, .maxNamed = 10});
    REQUIRE(c.observed());
    CHECK(c.seen == 120);
    CHECK(c.files <= 10);
    CHECK(c.files == c.exceptions.size());
    CHECK(c.sampled == "1 in 16 regular files: the walk's files 0, 16, 32, ... in breadth-first "
                       "readdir order, at most 10");
    std::set<std::string> dirs;
    for (const auto &e : c.exceptions)
        dirs.insert(fs::path(e.path).parent_path().filename());
    CHECK(dirs == std::set<std::string>{"a", "b", "c"});
    // Deterministic: the same tree gives the same sample.
    CHECK(censusOf(t.dir, {.maxFiles = 10, .maxNamed = 10}).exceptions == c.exceptions);
}

TEST_CASE("the census refuses a start that is not the mount's device", "[census]")
{
    CensusDir t;
    struct stat st {
    };
    REQUIRE(::stat(t.dir.c_str(), &st) == 0);
    DaxCensus c = takeDaxCensus(t.dir, ::major(st.st_dev), ::minor(st.st_dev) + 1);
    CHECK(c.failed());
    CHECK_THAT(c.text, Catch::Contains("is not on"));
}
