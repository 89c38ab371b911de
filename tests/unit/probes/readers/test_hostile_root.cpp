// Item 8/4 of issue 11: a capture tree, a --root or a live system that is
// hostile or broken gives a clear error, never a hang, a crash or a read
// outside the tree.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <fmt/format.h>

#include "base/beneath.h"
#include "base/root.h"
#include "probes/judges/verdict.h"
#include "probes/readers/facts.h"
#include "probes/readers/root_facts.h"
#include "tests/unit/probes/isolated.h"

using namespace daxprobe;
namespace fs = std::filesystem;

namespace
{

struct TempDir {
    fs::path dir;
    TempDir()
    {
        char tmpl[] = "/tmp/daxprobe-hostile-XXXXXX";
        dir = ::mkdtemp(tmpl);
        fs::permissions(dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                 fs::perms::others_read | fs::perms::others_exec);
    }
    ~TempDir() { fs::remove_all(dir); }
    fs::path write(const std::string &rel, const std::string &content)
    {
        fs::create_directories((dir / rel).parent_path());
        std::ofstream(dir / rel, std::ios::binary) << content;
        return dir / rel;
    }
    void fifo(const std::string &rel)
    {
        fs::create_directories((dir / rel).parent_path());
        REQUIRE(::mkfifo((dir / rel).c_str(), 0644) == 0);
    }
    void link(const std::string &rel, const std::string &target)
    {
        fs::create_directories((dir / rel).parent_path());
        fs::create_symlink(target, dir / rel);
    }
};

// What reading `rel` through a Root over `dir` gives, in a child that cannot hang the suite.
std::string readIsolated(const fs::path &dir, const std::string &rel)
{
    return runIsolated([&] {
        auto root = Root::open(dir.string());
        if (!root)
            return "open root: " + root.error().describe();
        auto text = root->readFile(rel);
        return text ? "CONTENT:" + *text : "ERROR:" + text.error().describe();
    });
}

} // namespace

TEST_CASE("a FIFO in a tree is an error, not a hang", "[root][hostile]")
{
    TempDir t;
    t.fifo("proc/sys/kernel/osrelease");
    t.fifo("dev/kmsg");
    t.fifo("sys/bus/cxl/devices/mem0/serial");
    t.fifo("sys/firmware/acpi/tables/CEDT");
    std::string got = readIsolated(t.dir, "proc/sys/kernel/osrelease");
    CHECK_THAT(got, Catch::StartsWith("ERROR:"));
    CHECK_THAT(got, Catch::Contains("FIFO"));

    // The whole replay path: kmsg, osrelease, all of it.
    std::string facts = runIsolated([&] {
        auto root = Root::open(t.dir.string());
        Facts f;
        readRootFacts(*root, f);
        Report r = evaluate(f);
        return f.kmsg.text + "|" + f.cedt.readError + "|" + r.overall.code;
    });
    CHECK_THAT(facts, Catch::Contains("dev/kmsg is a FIFO"));
    CHECK_THAT(facts, Catch::Contains("CEDT is a FIFO"));
}

TEST_CASE("directories, devices and dangling links are refused by type", "[root][hostile]")
{
    TempDir t;
    fs::create_directories(t.dir / "proc/meminfo");
    t.link("proc/vmstat", "nowhere");
    auto root = Root::open(t.dir.string());
    REQUIRE(root);
    auto dir = root->readFile("proc/meminfo");
    REQUIRE_FALSE(dir);
    CHECK_THAT(dir.error().describe(), Catch::Contains("a directory"));
    auto dangling = root->readFile("proc/vmstat");
    REQUIRE_FALSE(dangling);
    CHECK(dangling.error().code == ENOENT);

    // A character device (the null device's numbers) planted in a capture.
    if (::mknod((t.dir / "nfit").c_str(), S_IFCHR | 0644, ::makedev(1, 3)) != 0) {
        WARN("mknod not permitted here: the device case is not covered");
        return;
    }
    auto dev = root->readFile("nfit");
    REQUIRE_FALSE(dev);
    CHECK_THAT(dev.error().describe(), Catch::Contains("a character device"));
    // kmsg is the one place a character device is welcome.
    CHECK(root->openForRead("nfit", Root::kRegular | Root::kCharDevice));
}

TEST_CASE("a capture cannot read outside its root through links", "[root][hostile]")
{
    TempDir outside, t;
    fs::path secret = outside.write("shadow", "root:SECRET:19000:0:99999:7:::\n");
    t.write("devices/pmem0/dev", "259:0\n");
    t.link("proc/sys/kernel/osrelease", secret.string());                 // absolute
    t.link("proc/meminfo", "../../../../../../../../" + secret.string()); // .. chain
    t.link("sys/class/block/pmem0", "../../../devices/pmem0");            // inside: fine
    t.link("proc/self", "../devices");                                    // inside: fine
    t.link("escape", "..");
    auto root = Root::open(t.dir.string());
    REQUIRE(root);
    REQUIRE(root->confined());

    auto abs = root->readAttr("proc/sys/kernel/osrelease");
    REQUIRE_FALSE(abs);
    CHECK(abs.error().code == EXDEV);
    auto dots = root->readFile("proc/meminfo");
    REQUIRE_FALSE(dots);
    CHECK(dots.error().code == EXDEV);
    CHECK_FALSE(root->readFile("escape/" + outside.dir.filename().string() + "/shadow"));
    CHECK_FALSE(root->exists("escape"));
    CHECK_FALSE(root->listDir("escape"));
    CHECK(*root->readAttr("sys/class/block/pmem0/dev") == "259:0");
    CHECK(*root->readAttr("proc/self/pmem0/dev") == "259:0");
    CHECK(*root->readLink("sys/class/block/pmem0") == "../../../devices/pmem0");

    // Both resolvers, whatever this kernel has.
    for (ResolveMode mode : {ResolveMode::Openat2, ResolveMode::Walk}) {
        INFO("mode " << static_cast<int>(mode));
        UniqueFD dirfd(::open(t.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        auto in = openBeneath(dirfd.get(), "sys/class/block/pmem0/dev", O_RDONLY, mode);
        if (!in && in.error().code == ENOSYS) {
            WARN("openat2 is not available on this kernel: only the walk is covered");
            continue;
        }
        CHECK(in);
        for (const char *bad :
             {"proc/sys/kernel/osrelease", "proc/meminfo", "escape/x", "..", "sys/../../x"}) {
            INFO(bad);
            auto r = openBeneath(dirfd.get(), bad, O_RDONLY, mode);
            REQUIRE_FALSE(r);
            CHECK(r.error().code == EXDEV);
        }
        auto dot = openBeneath(dirfd.get(), "sys/..", O_RDONLY | O_DIRECTORY, mode);
        CHECK(dot);
        t.link("loop", "loop");
        auto loop = openBeneath(dirfd.get(), "loop", O_RDONLY, mode);
        REQUIRE_FALSE(loop);
        CHECK(loop.error().code == ELOOP);
        fs::remove(t.dir / "loop");
    }
}

TEST_CASE("the system root is not confined, a directory root is", "[root]")
{
    CHECK_FALSE(Root::system().confined());
    TempDir t;
    CHECK(Root::open(t.dir.string())->confined());
}

TEST_CASE("truncated and unreadable files give evidence, not a crash", "[root][hostile]")
{
    TempDir t;
    t.write("proc/meminfo", "MemTotal:       1"); // cut mid-line
    t.write("proc/vmstat", "pgfault");            // cut mid-line
    t.write("sys/firmware/acpi/tables/NFIT", "NFIT\x20\x00\x00");
    t.write("sys/firmware/acpi/tables/CEDT", "CEDT\xff\xff\x00\x00");
    t.write("sys/bus/cxl/devices/root0/port1/endpoint2/uport/uevent", "DEVNAME=");
    t.write("sys/bus/cxl/devices/root0/decoder0.0/region0/interleave_ways", "4294967295");
    t.write("proc/self/mountinfo", "31 22 259:0 / /mnt/pmem rw,relatime - ext4 /dev/pm");
    t.write("proc/sys/kernel/osrelease", "");
    auto root = Root::open(t.dir.string());
    REQUIRE(root);
    Facts f;
    readRootFacts(*root, f);
    Report r = evaluate(f);
    CHECK_FALSE(r.overall.code.empty());
    CHECK(r.exitCode != 0);
    CHECK_FALSE(f.nfit.valid());
    CHECK_FALSE(f.cedt.problems.empty());
    CHECK(f.cxl.regions.size() == 1);

    // Unreadable: only an unprivileged reader can be refused, so drop to nobody in a child.
    t.write("proc/meminfo", "MemTotal: 1 kB\n");
    fs::permissions(t.dir / "proc/meminfo", fs::perms::none);
    std::string got = runIsolated([&] {
        if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0))
            return std::string("SKIP");
        auto rt = Root::open(t.dir.string());
        auto text = rt->readFile("proc/meminfo");
        Facts facts;
        readRootFacts(*rt, facts);
        return text ? std::string("read") : text.error().describe() + "|" + facts.meminfoError;
    });
    if (got == "SKIP") {
        WARN("cannot drop privileges: the unreadable case is not covered");
        return;
    }
    CHECK_THAT(got, Catch::Contains("Permission denied"));
    CHECK_THAT(got, Catch::Contains("proc/meminfo"));
}

TEST_CASE("thousands of mounts with escaped names are all read", "[root][hostile][mountinfo]")
{
    TempDir t;
    std::string mi;
    constexpr int kMounts = 5000;
    for (int i = 0; i < kMounts; ++i)
        mi += fmt::format("{} 1 0:{} / /mnt/m{}\\040x\\011\\012\\134 rw - tmpfs tmpfs rw\n",
                          100 + i, 100 + i, i);
    mi += "99 1 259:0 / /mnt/a;reboot;$(id)\\033[2J rw - ext4 /dev/pmem0 rw\n";
    t.write("proc/self/mountinfo", mi);
    auto root = Root::open(t.dir.string());
    REQUIRE(root);
    Facts f;
    readRootFacts(*root, f);
    REQUIRE(f.mountsError.empty());
    REQUIRE(f.mounts.size() == kMounts + 1);
    CHECK(f.mounts[7].mountPoint == "/mnt/m7 x\t\n\\");
    CHECK(f.mounts.back().mountPoint == "/mnt/a;reboot;$(id)\033[2J");
    Report r = evaluate(f);
    CHECK_FALSE(r.overall.code.empty());
}
