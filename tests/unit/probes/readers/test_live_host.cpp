// Live probes on the build machine itself: no pmem here, so these pin down
// the non-DAX side (page cache residency, statx without DAX, MAP_SYNC
// refused). The DAX side is exercised in the guest scenarios (tests/vm).
#include <catch2/catch.hpp>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/page_residency.h"
#include "base/root.h"
#include "probes/readers/dax_evidence.h"
#include "probes/readers/kmsg.h"
#include "probes/readers/libpmem_loader.h"

using namespace daxprobe;
namespace fs = std::filesystem;

namespace
{

struct TempFile {
    std::string dir;
    std::string path;
    explicit TempFile(std::size_t bytes)
    {
        char tmpl[] = "/tmp/daxprobe-live-XXXXXX";
        dir = ::mkdtemp(tmpl);
        path = dir + "/data";
        int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
        std::string chunk(4096, 'x');
        for (std::size_t done = 0; done < bytes; done += chunk.size())
            REQUIRE(::write(fd, chunk.data(), chunk.size()) == static_cast<ssize_t>(chunk.size()));
        ::close(fd);
    }
    ~TempFile() { fs::remove_all(dir); }
};

} // namespace

TEST_CASE("residency of a file just written is its size, and drops when evicted",
          "[live][residency]")
{
    TempFile f(1 << 20);
    Residency r = measureResidency(f.path, false);
    REQUIRE(r.observed());
    CHECK((r.method == "mincore" || r.method == "cachestat"));
    CHECK(r.sizeBytes == 1 << 20);
    CHECK(r.residentBytes == 1 << 20);

    int fd = ::open(f.path.c_str(), O_RDONLY | O_CLOEXEC);
    ::fdatasync(fd);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
    Residency after = measureResidency(f.path, false);
    REQUIRE(after.observed());
    CHECK(after.residentBytes < r.residentBytes);
}

TEST_CASE("residency is not applicable on DAX files and fails cleanly on bad paths",
          "[live][residency]")
{
    TempFile f(8192);
    Residency dax = measureResidency(f.path, true);
    CHECK(dax.observed());
    CHECK(dax.method == "not_applicable");
    CHECK(dax.residentBytes == 0);

    Residency missing = measureResidency(f.dir + "/nope", false);
    CHECK(missing.state == EvidenceState::Failed);
    CHECK_THAT(missing.text, Catch::Contains("No such file"));
    Residency dir = measureResidency(f.dir, false);
    CHECK(dir.state == EvidenceState::Failed);
}

TEST_CASE("statx and MAP_SYNC on a non-DAX filesystem", "[live][dax]")
{
    TempFile f(4096);
    StatxEvidence s = statxDax(f.path);
    CHECK(s.observed());
    CHECK(s.text.empty());
    CHECK_FALSE(s.dax);

    StatxEvidence tmpStatx;
    MapSyncEvidence m = mapSyncCheck(f.dir, &tmpStatx);
    if (!m.observed()) {
        // O_TMPFILE unsupported here: the reason must be given, never silence.
        CHECK(m.state == EvidenceState::Skipped);
        CHECK_FALSE(m.text.empty());
        return;
    }
    CHECK_FALSE(m.mapped);
    CHECK_THAT(m.text, Catch::Contains("MAP_SYNC"));
    // libpmem (installed here: packaging/install-deps.sh) answered: not pmem.
    // Without it the answer is unknown (nullopt), never false.
    if (LibPmem::shared())
        CHECK(m.isPmem == false);
    else
        CHECK_FALSE(m.isPmem.has_value());
    CHECK(tmpStatx.observed());
    CHECK_FALSE(tmpStatx.dax);
    // Nothing is left behind: the test file had no name.
    CHECK(std::distance(fs::directory_iterator(f.dir), fs::directory_iterator()) == 1);

    StatxEvidence missing = statxDax(f.dir + "/nope");
    CHECK(missing.state == EvidenceState::Failed);
    CHECK_FALSE(missing.text.empty());
}

TEST_CASE("findRegularFile stays on the mount and finds files below the top", "[live][dax]")
{
    TempFile f(4096);
    fs::create_directories(f.dir + "/a/b");
    fs::rename(f.path, f.dir + "/a/b/deep");
    struct stat st {
    };
    REQUIRE(::stat(f.dir.c_str(), &st) == 0);
    std::string found = findRegularFile(f.dir, major(st.st_dev), minor(st.st_dev));
    CHECK(found == f.dir + "/a/b/deep");
    CHECK(findRegularFile(f.dir, major(st.st_dev) + 1, minor(st.st_dev)).empty());
}

TEST_CASE("the agent's kernel log reader resumes where it stopped", "[live][kmsg]")
{
    // Writing to /dev/kmsg needs root (as reading it may, with dmesg_restrict).
    UniqueFD writer(::open("/dev/kmsg", O_WRONLY | O_CLOEXEC));
    if (!writer) {
        WARN("cannot write /dev/kmsg here (" << std::strerror(errno) << "): not tested");
        return;
    }
    auto root = Root::open("/");
    REQUIRE(root);
    KmsgReader reader;
    KmsgFacts first = reader.read(*root);
    if (!first.observed()) {
        WARN("cannot read /dev/kmsg here (" << first.text << "): not tested");
        return;
    }
    CHECK(reader.resumed() == 0);

    // A record logged between two checks: the second check sees it, having
    // read only what came after the first (it kept the log open).
    std::string mark = "daxprobe unit test: dax kmsg reader mark " + std::to_string(::getpid());
    // With its newline, or the kernel holds the record open for a continuation.
    std::string line = mark + "\n";
    REQUIRE(::write(writer.get(), line.data(), line.size()) == static_cast<ssize_t>(line.size()));
    KmsgFacts second = reader.read(*root);
    CHECK(reader.resumed() == 1);
    CHECK(second.observed());
    REQUIRE_FALSE(second.records.empty());
    CHECK(second.records.back().message == mark);
    // What the first read kept is still there: the facts are the whole log's.
    CHECK(second.records.size() >= std::min<std::size_t>(first.records.size() + 1, 256));

    // The one-shot read (the whole log in one syslog(2) call) keeps the same
    // records as the reader that went through /dev/kmsg record by record.
    KmsgFacts whole = readKmsg(*root);
    REQUIRE(whole.observed());
    REQUIRE_FALSE(whole.records.empty());
    CHECK(whole.records.back().message == mark);
    CHECK(whole.records.back().device == second.records.back().device);
    if (first.records.size() + 1 < 256) { // nothing dropped by the bound on either side
        REQUIRE(whole.records.size() == second.records.size());
        for (std::size_t i = 0; i < whole.records.size(); ++i) {
            INFO("record " << i);
            CHECK(whole.records[i].message == second.records[i].message);
            CHECK(whole.records[i].level == second.records[i].level);
        }
    }
}

namespace
{

// The whole file, read the plain way (std::ifstream until EOF): the source
// Root's shortened sysfs reads are held to.
std::string readPlainly(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

} // namespace

TEST_CASE("sysfs attributes read through the live root are whole", "[live][root]")
{
    auto root = Root::system();
    // A one-page attribute, and a binary attribute of many pages (the
    // kernel's BTF, a page per read()): a read that stopped at the first
    // short or page-sized chunk would lose their ends.
    for (const std::string path : {"/sys/kernel/mm/transparent_hugepage/enabled",
                                   "/sys/devices/system/cpu/online", "/sys/kernel/btf/vmlinux"}) {
        if (::access(path.c_str(), R_OK) != 0) {
            WARN("SKIP " << path << ": " << std::strerror(errno));
            continue;
        }
        INFO(path);
        auto got = root.readFile(path, std::size_t{64} << 20);
        REQUIRE(got);
        std::string want = readPlainly(path);
        CHECK(got->size() == want.size());
        CHECK((*got == want)); // not decomposed: a 5 MB string in a failure message helps no one
        if (path.find("btf") != std::string::npos)
            CHECK(want.size() > 4096);
    }
    // A directory still fails, with its name in the error.
    auto dir = root.readFile("/sys/kernel");
    REQUIRE_FALSE(dir);
    CHECK_THAT(dir.error().describe(), Catch::Contains("sys/kernel"));
}

TEST_CASE("seq_files under sys/ read through the live root are whole", "[live][root]")
{
    // tracefs (and debugfs, securityfs) are mounted under sys/ but are not
    // kernfs: available_events arrives about a page per read(), and a read
    // that stopped at the first short chunk saw no fs_dax line (issue 19).
    auto root = Root::system();
    const std::string path = "/sys/kernel/tracing/available_events";
    if (::access(path.c_str(), R_OK) != 0) {
        WARN("SKIP " << path << ": " << std::strerror(errno)
                     << " (mount -t tracefs nodev /sys/kernel/tracing)");
        return;
    }
    auto got = root.readFile(path, std::size_t{16} << 20);
    REQUIRE(got);
    std::string want = readPlainly(path);
    CHECK(want.size() > 4096); // more than one seq_file page, or the test proves nothing
    CHECK(got->size() == want.size());
    CHECK((*got == want));
}
