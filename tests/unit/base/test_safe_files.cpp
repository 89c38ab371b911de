#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "base/safe_files.h"
#include "tests/unit/collector/tmpdir.h"
#include "tests/unit/probes/isolated.h"

using namespace daxprobe;
namespace fs = std::filesystem;

namespace
{

constexpr uid_t kNobody = 65534;

std::string slurp(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void put(const std::string &path, const std::string &text)
{
    std::ofstream(path, std::ios::binary) << text;
}

// A directory like /tmp: sticky, world-writable.
std::string stickyDir(const TempDir &t)
{
    std::string d = t.path() + "/shared";
    REQUIRE(::mkdir(d.c_str(), 0777) == 0);
    REQUIRE(::chmod(d.c_str(), 01777) == 0);
    return d;
}

} // namespace

TEST_CASE("openParent holds the directory and names the last component", "[safe_files]")
{
    TempDir t;
    auto p = openParent(t.path() + "/x");
    REQUIRE(p);
    CHECK(p->name == "x");
    auto cwd = openParent("plain");
    REQUIRE(cwd);
    CHECK(cwd->name == "plain");
    CHECK(openParent("").error().code == ENOENT);
    CHECK(openParent(t.path() + "/").error().code == EISDIR);
    CHECK(openParent(t.path() + "/..").error().code == EINVAL);
    CHECK(openParent(t.path() + "/missing/x").error().code == ENOENT);
}

TEST_CASE("createExclusive never opens an existing name or a symlink", "[safe_files]")
{
    TempDir t;
    put(t.path() + "/victim", "keep");
    fs::create_symlink(t.path() + "/victim", t.path() + "/link");
    auto p = openParent(t.path() + "/link");
    REQUIRE(p);
    auto viaLink = createExclusive(p->dir.get(), "link", O_WRONLY, 0600);
    REQUIRE_FALSE(viaLink);
    CHECK(viaLink.error().code == EEXIST);
    auto existing = createExclusive(p->dir.get(), "victim", O_WRONLY, 0600);
    REQUIRE_FALSE(existing);
    CHECK(existing.error().code == EEXIST);
    CHECK(slurp(t.path() + "/victim") == "keep");

    auto made = createExclusive(p->dir.get(), "new", O_RDWR, 0600);
    REQUIRE(made);
    struct stat st {
    };
    REQUIRE(::stat((t.path() + "/new").c_str(), &st) == 0);
    CHECK(made->id == (FileId{st.st_dev, st.st_ino}));
}

TEST_CASE("removeCreated removes the inode it made, through the held directory", "[safe_files]")
{
    TempDir t;
    fs::create_directory(t.path() + "/d");
    fs::create_directory(t.path() + "/elsewhere");
    put(t.path() + "/elsewhere/f", "not ours");
    auto p = openParent(t.path() + "/d/f");
    REQUIRE(p);
    auto made = createExclusive(p->dir.get(), p->name, O_RDWR, 0600);
    REQUIRE(made);

    SECTION("the parent renamed and replaced by a symlink")
    {
        fs::rename(t.path() + "/d", t.path() + "/d.old");
        fs::create_directory_symlink(t.path() + "/elsewhere", t.path() + "/d");
        REQUIRE(removeCreated(p->dir.get(), p->name, made->id));
        CHECK_FALSE(fs::exists(t.path() + "/d.old/f"));
        CHECK(slurp(t.path() + "/elsewhere/f") == "not ours");
    }
    SECTION("the name replaced by a symlink: left alone")
    {
        fs::rename(t.path() + "/d/f", t.path() + "/d/moved");
        fs::create_symlink(t.path() + "/elsewhere/f", t.path() + "/d/f");
        auto r = removeCreated(p->dir.get(), p->name, made->id);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == ESTALE);
        CHECK(fs::is_symlink(t.path() + "/d/f"));
        CHECK(slurp(t.path() + "/elsewhere/f") == "not ours");
    }
    SECTION("the name replaced by another file: left alone")
    {
        fs::remove(t.path() + "/d/f");
        put(t.path() + "/d/f", "theirs");
        auto r = removeCreated(p->dir.get(), p->name, made->id);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == ESTALE);
        CHECK(slurp(t.path() + "/d/f") == "theirs");
    }
    SECTION("already gone")
    {
        fs::remove(t.path() + "/d/f");
        CHECK(removeCreated(p->dir.get(), p->name, made->id).error().code == ENOENT);
    }
}

TEST_CASE("makeDirExclusive makes a new directory or fails", "[safe_files]")
{
    TempDir t;
    fs::create_directory(t.path() + "/there");
    fs::create_directory_symlink(t.path() + "/there", t.path() + "/link");
    auto p = openParent(t.path() + "/x");
    REQUIRE(p);
    CHECK(makeDirExclusive(p->dir.get(), "there", 0700).error().code == EEXIST);
    CHECK(makeDirExclusive(p->dir.get(), "link", 0700).error().code == EEXIST);
    auto made = makeDirExclusive(p->dir.get(), "x", 0700);
    REQUIRE(made);
    auto inner = createExclusive(made->get(), "f", O_WRONLY, 0600);
    REQUIRE(inner);
    CHECK(fs::exists(t.path() + "/x/f"));
}

TEST_CASE("openForRedirect writes as a shell redirect would", "[safe_files]")
{
    TempDir t;
    std::string out = t.path() + "/out";
    put(out, "old and long");
    auto fd = openForRedirect(out);
    REQUIRE(fd);
    REQUIRE(writeAll(fd->get(), "new", out));
    CHECK(slurp(out) == "new");
    // Outside a sticky world-writable directory a symlink is followed, as by `>`.
    fs::create_symlink(out, t.path() + "/link");
    auto viaLink = openForRedirect(t.path() + "/link");
    REQUIRE(viaLink);
    REQUIRE(writeAll(viaLink->get(), "linked", out));
    CHECK(slurp(out) == "linked");
    // A FIFO outside /tmp-like directories blocks for a reader, as `>` does;
    // not tested here (it would block).
}

TEST_CASE("openForRedirect in a sticky world-writable directory", "[safe_files]")
{
    TempDir t;
    std::string shared = stickyDir(t);
    std::string victim = t.path() + "/victim";
    put(victim, "keep");

    SECTION("the caller's own names work as with `>`")
    {
        auto fresh = openForRedirect(shared + "/new");
        REQUIRE(fresh);
        REQUIRE(writeAll(fresh->get(), "x", "new"));
        put(shared + "/mine", "old text");
        auto mine = openForRedirect(shared + "/mine");
        REQUIRE(mine);
        CHECK(slurp(shared + "/mine").empty()); // truncated
        fs::create_symlink(shared + "/mine", shared + "/mylink");
        CHECK(openForRedirect(shared + "/mylink"));
    }
    SECTION("a FIFO with no reader fails instead of blocking")
    {
        REQUIRE(::mkfifo((shared + "/fifo").c_str(), 0666) == 0);
        std::string got = runIsolated([&] {
            auto r = openForRedirect(shared + "/fifo");
            return r ? std::string("opened") : std::to_string(r.error().code);
        });
        CHECK(got == std::to_string(ENXIO));
    }
    SECTION("another user's symlink, file or FIFO is refused, untouched")
    {
        if (::geteuid() != 0) {
            WARN("SKIP: needs root to give names to a second user");
            return;
        }
        std::string link = shared + "/link";
        fs::create_symlink(victim, link);
        REQUIRE(::lchown(link.c_str(), kNobody, kNobody) == 0);
        auto r = openForRedirect(link);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == EACCES);
        CHECK(slurp(victim) == "keep");

        std::string theirs = shared + "/theirs";
        put(theirs, "their text");
        REQUIRE(::chown(theirs.c_str(), kNobody, kNobody) == 0);
        auto f = openForRedirect(theirs);
        REQUIRE_FALSE(f);
        CHECK(f.error().code == EACCES);
        CHECK(slurp(theirs) == "their text"); // not truncated

        std::string fifo = shared + "/theirfifo";
        REQUIRE(::mkfifo(fifo.c_str(), 0666) == 0);
        REQUIRE(::chown(fifo.c_str(), kNobody, kNobody) == 0);
        // A reader, so the open itself would succeed: only the owner refuses it.
        UniqueFD reader(::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
        REQUIRE(reader);
        CHECK(openForRedirect(fifo).error().code == EACCES);
        reader.reset(); // without one, refused all the same, not waited for
        std::string got = runIsolated([&] {
            auto r = openForRedirect(fifo);
            return r ? std::string("opened") : std::to_string(r.error().code);
        });
        CHECK((got == std::to_string(EACCES) || got == std::to_string(ENXIO)));
    }
}
