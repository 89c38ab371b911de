// Per-file DAX (dax=inode, issue 8 part 2): XFS/ext4 without a dax option give
// DAX to files with FS_XFLAG_DAX. A --path file that is DAX is never
// summarised as going through the page cache.
#include <catch2/catch.hpp>

#include "probes/judges/verdict.h"

#include "tests/unit/probes/pmem_facts.h"

using namespace daxprobe;

namespace
{

Facts inodeFacts(const std::string &fstype, const std::string &superOptions, bool newFilesDax)
{
    Facts f = test::pmemFacts(fstype, superOptions);
    MountEntry root;
    root.mountId = 1;
    root.mountPoint = "/";
    root.fstype = "rootfs";
    f.mounts.insert(f.mounts.begin(), root);
    MountLiveFacts live;
    live.statx.observe();
    live.statx.file = "/mnt/pmem/(O_TMPFILE)";
    live.statx.dax = newFilesDax;
    live.mapSync.observe();
    live.mapSync.mapped = newFilesDax;
    f.mountLive["/mnt/pmem"] = live;
    return f;
}

void addFile(Facts &f, const std::string &path, bool dax)
{
    FileFacts ff;
    ff.path = path;
    ff.statx.observe();
    ff.statx.file = path;
    ff.statx.dax = dax;
    f.files.push_back(ff);
}

} // namespace

TEST_CASE("dax=inode: a flagged and an unflagged --path file", "[verdict][per-file]")
{
    Facts f = inodeFacts("xfs", "rw,attr2,inode64,logbufs=8,noquota", false);
    addFile(f, "/mnt/pmem/flagged", true);
    addFile(f, "/mnt/pmem/plain/unflagged", false);
    Report r = evaluate(f);
    REQUIRE(r.mounts.size() == 1);
    const Verdict &v = r.mounts[0].verdict;
    CHECK(r.mounts[0].files.size() == 2);
    CHECK(v.code == code::DaxPerFile);
    CHECK(v.severity == Severity::Warning);
    CHECK_THAT(v.summary, Catch::Contains("per-file DAX mode") &&
                              Catch::Contains("DAX: /mnt/pmem/flagged") &&
                              Catch::Contains("not DAX (page cache): /mnt/pmem/plain/unflagged"));
    REQUIRE(v.warnings.size() == 1);
    CHECK_THAT(v.warnings[0], Catch::StartsWith("/mnt/pmem/plain/unflagged has no DAX flag"));
    // Both remedies: remount for every file, or the flag on the directory.
    CHECK_THAT(v.remedy, Catch::Contains("mount -o dax=always /dev/pmem0 /mnt/pmem") &&
                             Catch::Contains("xfs_io -c 'chattr +x' /mnt/pmem/plain"));
    // A warning, not a problem: the DAX file is DAX.
    CHECK(r.overall.code == code::DaxVerified);
}

TEST_CASE("dax=inode: every --path file DAX is no problem and says no page cache",
          "[verdict][per-file]")
{
    Facts f = inodeFacts("ext4", "rw", false);
    addFile(f, "/mnt/pmem/flagged", true);
    Report r = evaluate(f);
    REQUIRE(r.mounts.size() == 1);
    const Verdict &v = r.mounts[0].verdict;
    CHECK(v.code == code::DaxPerFile);
    CHECK(v.severity == Severity::Ok);
    CHECK_THAT(v.summary, !Catch::Contains("page cache"));
    CHECK_THAT(v.summary, Catch::Contains("new files in /mnt/pmem are not DAX"));
    CHECK(v.remedy.empty());
    CHECK(r.exitCode == 0);
}

TEST_CASE("dax=inode: a flagged root directory makes new files DAX", "[verdict][per-file]")
{
    Facts f = inodeFacts("xfs", "rw,attr2,inode64", true);
    Report r = evaluate(f);
    CHECK(r.mounts[0].verdict.code == code::DaxPerFile);
    CHECK_THAT(r.mounts[0].verdict.summary, Catch::Contains("new files in /mnt/pmem are DAX"));
}

TEST_CASE("dax=inode: nothing examined is DAX", "[verdict][per-file]")
{
    Facts f = inodeFacts("ext4", "rw", false);
    addFile(f, "/mnt/pmem/testfile", false);
    addFile(f, "/elsewhere/file", true); // on another mount: not this mount's
    Report r = evaluate(f);
    const Verdict &v = r.mounts[0].verdict;
    CHECK(r.mounts[0].files.size() == 1);
    CHECK(v.code == code::DaxNotRequested);
    CHECK(v.severity == Severity::Problem);
    CHECK_THAT(v.summary,
               Catch::Contains("per-file mode") && Catch::Contains("/mnt/pmem/testfile"));
    CHECK_THAT(v.remedy, Catch::Contains("dax=always") && Catch::Contains("chattr +x"));
    CHECK(r.exitCode == 1);

    // An explicit dax=inode is a choice: a warning.
    f = inodeFacts("ext4", "rw,dax=inode", false);
    r = evaluate(f);
    CHECK(r.mounts[0].verdict.code == code::DaxNotRequested);
    CHECK(r.mounts[0].verdict.severity == Severity::Warning);
}

TEST_CASE("files belong to the longest mount point that holds them", "[verdict][per-file]")
{
    std::vector<MountEntry> mounts(3);
    mounts[0].mountPoint = "/";
    mounts[1].mountPoint = "/mnt/pmem";
    mounts[2].mountPoint = "/mnt/pmem2";
    CHECK(mountOfPath(mounts, "/mnt/pmem/a") == &mounts[1]);
    CHECK(mountOfPath(mounts, "/mnt/pmem2/a") == &mounts[2]);
    CHECK(mountOfPath(mounts, "/mnt/pmemx") == &mounts[0]);
    CHECK(mountOfPath(mounts, "relative/a") == nullptr);
}
