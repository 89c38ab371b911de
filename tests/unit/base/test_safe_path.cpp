// Root-safe lookups (base/safe_path.h, issue 45, item 3): every component,
// through openat2's fast path and through the walk, follows root's and the
// caller's symlinks and refuses another user's wherever it stands.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "base/safe_files.h"
#include "base/safe_path.h"
#include "tests/unit/collector/tmpdir.h"

using namespace daxprobe;
namespace fs = std::filesystem;

namespace
{

constexpr uid_t kOtherUid = 65534;

// Which directory a resolved name's fd holds, as an inode.
ino_t inodeAt(int fd)
{
    struct stat st {
    };
    REQUIRE(::fstat(fd, &st) == 0);
    return st.st_ino;
}

ino_t inodeAt(const std::string &path)
{
    struct stat st {
    };
    REQUIRE(::stat(path.c_str(), &st) == 0);
    return st.st_ino;
}

} // namespace

TEST_CASE("resolveTrusted follows the caller's links on every component", "[safe_path]")
{
    TempDir t;
    const std::string real = t.path() + "/real";
    fs::create_directories(real + "/sub");
    fs::create_directory_symlink(real, t.path() + "/abs");       // absolute target
    fs::create_directory_symlink("real/sub", t.path() + "/rel"); // relative target
    fs::create_symlink(real + "/file", t.path() + "/filelink");
    std::ofstream(real + "/file") << "x";
    auto mode = GENERATE(ResolveMode::Auto, ResolveMode::Walk);

    auto a = resolveTrusted(t.path() + "/abs/sub/out", false, mode);
    REQUIRE(a);
    CHECK(a->name == "out");
    CHECK(inodeAt(a->dir.get()) == inodeAt(real + "/sub"));

    auto r = resolveTrusted(t.path() + "/rel/../out", false, mode);
    REQUIRE(r);
    CHECK(inodeAt(r->dir.get()) == inodeAt(real)); // ".." of the link's target, as the kernel

    // The last name: kept as a name, or followed to the file it leads to.
    auto kept = resolveTrusted(t.path() + "/filelink", false, mode);
    REQUIRE(kept);
    CHECK(kept->name == "filelink");
    auto followed = resolveTrusted(t.path() + "/filelink", true, mode);
    REQUIRE(followed);
    CHECK(followed->name == "file");
    CHECK(inodeAt(followed->dir.get()) == inodeAt(real));

    auto d = openDirTrusted(t.path() + "/abs/sub/", mode);
    REQUIRE(d);
    CHECK(inodeAt(d->get()) == inodeAt(real + "/sub"));
    CHECK(openDirTrusted("/", mode));

    CHECK(resolveTrusted(t.path() + "/abs/..", false, mode).error().code == EINVAL);
    CHECK(resolveTrusted(t.path() + "/file/x", false, mode).error().code == ENOENT);
    std::ofstream(t.path() + "/plain") << "x";
    CHECK(resolveTrusted(t.path() + "/plain/x", false, mode).error().code == ENOTDIR);
}

TEST_CASE("resolveTrusted bounds a symlink loop", "[safe_path]")
{
    TempDir t;
    fs::create_directory_symlink(t.path() + "/b", t.path() + "/a");
    fs::create_directory_symlink(t.path() + "/a", t.path() + "/b");
    auto mode = GENERATE(ResolveMode::Auto, ResolveMode::Walk);
    auto r = resolveTrusted(t.path() + "/a/out", false, mode);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ELOOP);
}

TEST_CASE("resolveTrusted refuses another user's link on any component", "[safe_path]")
{
    if (::geteuid() != 0) {
        WARN("SKIP: needs root to give a symlink to a second user");
        return;
    }
    TempDir t;
    const std::string real = t.path() + "/real";
    fs::create_directories(real + "/sub");
    const std::string theirs = t.path() + "/theirs";
    fs::create_directory_symlink(real, theirs);
    REQUIRE(::lchown(theirs.c_str(), kOtherUid, kOtherUid) == 0);
    auto mode = GENERATE(ResolveMode::Auto, ResolveMode::Walk);

    // One directory up, two up, as the last name, and inside a root link's target.
    for (const std::string &p : {theirs + "/out", theirs + "/sub/out"}) {
        auto r = resolveTrusted(p, false, mode);
        REQUIRE_FALSE(r);
        CHECK(r.error().code == EACCES);
    }
    auto last = resolveTrusted(theirs, true, mode);
    REQUIRE_FALSE(last);
    CHECK(last.error().code == EACCES);
    CHECK(resolveTrusted(theirs, false, mode)); // not followed: just a name
    fs::create_directory_symlink(theirs, t.path() + "/mine");
    CHECK(resolveTrusted(t.path() + "/mine/out", false, mode).error().code == EACCES);
    CHECK(openDirTrusted(theirs, mode).error().code == EACCES);
    // What openParent and openForRedirect are built on refuses it too.
    CHECK(openParent(theirs + "/out").error().code == EACCES);
    CHECK(openForRedirect(theirs + "/out").error().code == EACCES);
    CHECK(fs::is_empty(real + "/sub"));
}

TEST_CASE("openForRedirect refuses a file with another hard link", "[safe_path]")
{
    TempDir t;
    const std::string file = t.path() + "/file";
    std::ofstream(file) << "keep";
    REQUIRE(::link(file.c_str(), (t.path() + "/second").c_str()) == 0);
    auto r = openForRedirect(t.path() + "/second");
    REQUIRE_FALSE(r);
    CHECK(r.error().code == EMLINK);
    CHECK(fs::file_size(file) == 4); // not truncated
    REQUIRE(::unlink((t.path() + "/second").c_str()) == 0);
    CHECK(openForRedirect(file));
    CHECK(fs::file_size(file) == 0);
}
