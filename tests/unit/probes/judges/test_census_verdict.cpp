// The per-file census on a dax=always mount (issue 34): files the kernel
// does not give DAX while the mount says dax=always are named, counted, and
// get the remedy their cause has; dax=inode keeps its per-file verdict.
#include <catch2/catch.hpp>

#include <fstream>
#include <regex>
#include <sstream>

#include "probes/capture/live_facts.h"
#include "probes/judges/verdict.h"
#include "probes/readers/root_facts.h"

#include "tests/unit/probes/pmem_facts.h"

using namespace daxprobe;

namespace
{

// EROFS on the fsdax namespace, -o dax: the census as the kernel answered
// for mkfs.erofs's defaults (tails inline) and a compressed file.
Facts erofsFacts(std::uint64_t dax, std::uint64_t inlineTail, std::uint64_t compressed)
{
    Facts f = test::pmemFacts("erofs", "ro,dax=always");
    MountLiveFacts live;
    live.statx.observe();
    live.statx.file = "/mnt/pmem/whole";
    live.statx.dax = dax > 0;
    live.mapSync.skip("read-only mount");
    DaxCensus &c = live.census;
    c.files = dax + inlineTail + compressed;
    c.daxFiles = dax;
    c.inlineTail = inlineTail;
    c.compressed = compressed;
    for (std::uint64_t i = 0; i < inlineTail; ++i)
        c.exceptions.push_back({"/mnt/pmem/tail" + std::to_string(i), NotDaxReason::InlineTail});
    for (std::uint64_t i = 0; i < compressed; ++i)
        c.exceptions.push_back({"/mnt/pmem/z" + std::to_string(i), NotDaxReason::Compressed});
    c.observe();
    f.mountLive["/mnt/pmem"] = live;
    return f;
}

} // namespace

TEST_CASE("EROFS inline tails on a dax mount: a warning naming them, the rebuild",
          "[verdict][census]")
{
    Facts f = erofsFacts(1, 2, 0);
    Report r = evaluate(f);
    REQUIRE(r.mounts.size() == 1);
    const Verdict &v = r.mounts[0].verdict;
    CHECK(v.code == code::FilesNotDax);
    CHECK(v.severity == Severity::Warning);
    CHECK_THAT(v.summary, Catch::Contains("1 of 3 files are DAX: 2 go through the page cache"));
    REQUIRE(v.warnings.size() == 1);
    CHECK_THAT(v.warnings[0], Catch::Contains("2 file(s) keep their data's tail inline") &&
                                  Catch::Contains("/mnt/pmem/tail0, /mnt/pmem/tail1"));
    CHECK(v.remedy == "umount /mnt/pmem; mkfs.erofs -E noinline_data /dev/pmem0 SOURCE_DIR; "
                      "mount -t erofs -o dax /dev/pmem0 /mnt/pmem   # SOURCE_DIR: the tree the "
                      "image was made from; no -z: compressed files are never DAX");
    bool censusShown = false;
    for (const auto &e : v.evidence)
        censusShown |= e.check == "census" && e.result == "1 of 3 files DAX";
    CHECK(censusShown);
    // A warning: the mount is DAX, the exit code keeps its meaning.
    CHECK(r.overall.code == code::DaxVerified);
    CHECK(r.exitCode == 0);
}

TEST_CASE("compressed files are named as never DAX; every file counted, a few named",
          "[verdict][census]")
{
    Facts f = erofsFacts(0, 8, 1);
    DaxCensus &c = f.mountLive["/mnt/pmem"].census;
    c.exceptions.resize(4); // the walk names a few
    c.exceptions.push_back({"/mnt/pmem/z0", NotDaxReason::Compressed});
    c.stoppedEarly = "stopped after 9 files";
    Report r = evaluate(f);
    const Verdict &v = r.mounts[0].verdict;
    // No file is DAX, but each has a layout reason on a DAX device: not "off".
    CHECK(v.code == code::FilesNotDax);
    CHECK_THAT(v.summary, Catch::Contains("0 of 9 files are DAX"));
    REQUIRE(v.warnings.size() == 3);
    CHECK_THAT(v.warnings[0],
               Catch::Contains("8 file(s)") && Catch::Contains("/mnt/pmem/tail3 and 4 more"));
    CHECK_THAT(v.warnings[1], Catch::Contains("1 compressed file(s) are never DAX") &&
                                  Catch::Contains("mkfs.erofs without -z") &&
                                  Catch::EndsWith("/mnt/pmem/z0"));
    CHECK_THAT(v.warnings[2], Catch::Contains("stopped after 9 files"));
    CHECK_THAT(v.remedy, Catch::Contains("mkfs.erofs -E noinline_data"));
}

TEST_CASE("an image whose only non-DAX files are compressed gets no noinline_data remedy",
          "[verdict][census]")
{
    Facts f = erofsFacts(1, 0, 2);
    Report r = evaluate(f);
    const Verdict &v = r.mounts[0].verdict;
    CHECK(v.code == code::FilesNotDax);
    REQUIRE(v.warnings.size() == 1);
    CHECK_THAT(v.warnings[0], Catch::Contains("2 compressed file(s) are never DAX") &&
                                  Catch::Contains("/mnt/pmem/z0, /mnt/pmem/z1"));
    CHECK(v.remedy.empty());
}

TEST_CASE("a sampled census says so: its counts, the files met, the rule", "[verdict][census]")
{
    Facts f = erofsFacts(1, 2, 0);
    DaxCensus &c = f.mountLive["/mnt/pmem"].census;
    c.seen = 300;
    c.sampled = "1 in 128 regular files";
    Report r = evaluate(f);
    const Verdict &v = r.mounts[0].verdict;
    CHECK_THAT(v.summary, Catch::Contains("but 1 of 3 sampled files are DAX"));
    bool censusShown = false;
    for (const auto &e : v.evidence)
        censusShown |= e.check == "census" && e.result == "1 of 3 sampled files DAX (of about 300)";
    CHECK(censusShown);
    REQUIRE(v.warnings.size() == 2);
    CHECK_THAT(v.warnings[1], Catch::Contains("a sample (1 in 128 regular files) of about 300"));
}

TEST_CASE("a complete census of DAX files changes nothing", "[verdict][census]")
{
    Facts f = erofsFacts(3, 0, 0);
    Report r = evaluate(f);
    const Verdict &v = r.mounts[0].verdict;
    CHECK(v.code == code::DaxActive);
    CHECK(v.warnings.empty());
}

TEST_CASE("no file DAX and no layout reason stays dax_silently_off", "[verdict][census]")
{
    Facts f = erofsFacts(0, 0, 0);
    DaxCensus &c = f.mountLive["/mnt/pmem"].census;
    c.files = 2;
    c.unknown = 2;
    CHECK(evaluate(f).mounts[0].verdict.code == code::DaxSilentlyOff);
}

TEST_CASE("dax=inode keeps its per-file verdict whatever the census says", "[verdict][census]")
{
    Facts f = test::pmemFacts("xfs", "rw,attr2,inode64,logbufs=8,noquota");
    MountLiveFacts live;
    live.statx.observe();
    live.statx.file = "/mnt/pmem/(O_TMPFILE)";
    live.statx.dax = true;
    live.mapSync.observe();
    live.mapSync.mapped = true;
    live.census.files = 2;
    live.census.daxFiles = 1;
    live.census.unknown = 1;
    live.census.exceptions.push_back({"/mnt/pmem/plain", NotDaxReason::Unknown});
    live.census.observe();
    f.mountLive["/mnt/pmem"] = live;
    Report r = evaluate(f);
    const Verdict &v = r.mounts[0].verdict;
    CHECK(v.code == code::DaxPerFile);
    CHECK(v.severity == Severity::Ok);
}

TEST_CASE("ext4 dax=always with a file of no known reason: named, no remedy", "[verdict][census]")
{
    Facts f = test::pmemFacts("ext4", "rw,dax=always");
    MountLiveFacts live;
    live.statx.observe();
    live.statx.file = "/mnt/pmem/(O_TMPFILE)";
    live.statx.dax = true;
    live.mapSync.observe();
    live.mapSync.mapped = true;
    live.census.files = 5;
    live.census.daxFiles = 4;
    live.census.unknown = 1;
    live.census.exceptions.push_back({"/mnt/pmem/odd", NotDaxReason::Unknown});
    live.census.observe();
    f.mountLive["/mnt/pmem"] = live;
    Report r = evaluate(f);
    const Verdict &v = r.mounts[0].verdict;
    CHECK(v.code == code::FilesNotDax);
    REQUIRE(v.warnings.size() == 1);
    CHECK_THAT(v.warnings[0], Catch::Contains("neither statx nor FIEMAP says why: /mnt/pmem/odd"));
    CHECK(v.remedy.empty());
}

namespace
{

std::string readFixtureFile(const std::string &path)
{
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

// The kernel's STATX_ATTR_DAX of one file in the captured guest (xfs_io statx -r).
bool erofsKernelDax(const std::string &dir, const std::string &file)
{
    std::smatch m;
    std::string statx = readFixtureFile(dir + "/_vm/erofs-before-statx-" + file + ".txt");
    REQUIRE(std::regex_search(statx, m, std::regex(R"(stat\.attributes = (0x[0-9a-fA-F]+))")));
    return (std::stoull(m[1], nullptr, 16) & 0x00200000) != 0;
}

} // namespace

TEST_CASE("the captured EROFS guest: the warning names the files the kernel says are not DAX",
          "[verdict][census][fixture]")
{
    // tests/fixtures/erofs-dax: a QEMU NVDIMM guest (6.1), fsdax, an image
    // by mkfs.erofs 1.5's defaults of small, tail and whole, mounted -o dax.
    const std::string dir = FIXTURES_DIR "/erofs-dax";
    Facts facts;
    liveFactsFromJson(nlohmann::json::parse(readFixtureFile(dir + "/live.json")), facts);
    auto root = Root::open(dir);
    REQUIRE(root);
    readRootFacts(*root, facts);
    Report r = evaluate(facts);
    const MountReport *m = nullptr;
    for (const auto &mr : r.mounts)
        if (mr.mount->mountPoint == "/mnt/pmem")
            m = &mr;
    REQUIRE(m);
    const Verdict &v = m->verdict;
    CHECK(v.code == code::FilesNotDax);
    std::string warned;
    for (const auto &w : v.warnings)
        warned += w + "\n";
    for (const char *f : {"small", "tail", "whole"}) {
        INFO(f);
        CHECK((warned.find(std::string("/mnt/pmem/") + f) != std::string::npos) ==
              !erofsKernelDax(dir, f));
    }
    CHECK_THAT(v.remedy, Catch::Contains("mkfs.erofs -E noinline_data"));
    CHECK(r.exitCode == 0);
}
