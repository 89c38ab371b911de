// The fleet memory ledger: guest claims read from report text (untrusted),
// host files measured for real (a written file is in the page cache, a
// dropped one is not), and a file shared by several VMs counted once.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "base/root.h"
#include "collector/backing_files.h"
#include "collector/ledger.h"
#include "collector/ledger_metrics.h"
#include "collector/metrics.h"
#include "tests/unit/collector/tmpdir.h"

using namespace daxprobe::collector;

namespace
{

// What the collector does with a stored report: summarize, then count.
GuestMemory memoryOf(std::string_view reportText)
{
    return guestMemoryOf(daxprobe::protocol::summarizeReport(reportText));
}

std::string slurp(const std::string &path)
{
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

void writeFile(const std::string &path, const std::string &bytes)
{
    std::ofstream f(path, std::ios::binary);
    f << bytes;
}

// A qcow2 v3 header naming `backing` (only the fields the reader uses).
std::string qcow2Header(const std::string &backing)
{
    std::string h(512, '\0');
    const unsigned char magic[] = {'Q', 'F', 'I', 0xfb, 0, 0, 0, 3};
    h.replace(0, 8, reinterpret_cast<const char *>(magic), 8);
    h[15] = static_cast<char>(104); // backing_file_offset = 104 (big-endian u64)
    h[19] = static_cast<char>(backing.size());
    h.replace(104, backing.size(), backing);
    return h;
}

} // namespace

TEST_CASE("guest memory from a real report", "[collector][ledger]")
{
    GuestMemory g = memoryOf(slurp(REPORT_FIXTURES "/fsdax-ext4/expected.json"));
    CHECK(g.reported);
    CHECK(g.pageCacheBytes == 26628096);
    CHECK(g.daxMountBytes == 526385152); // namespace0.0 under the dax_active /mnt/pmem

    GuestMemory raw = memoryOf(slurp(REPORT_FIXTURES "/raw-xfs/expected.json"));
    CHECK(raw.reported);
    CHECK(raw.daxMountBytes == 0); // dax silently off: nothing served by DAX
}

TEST_CASE("guest memory claims are bounded and typed", "[collector][ledger]")
{
    auto g = memoryOf(R"({"meminfo":{"Cached":"12"}})");
    CHECK_FALSE(g.reported);
    g = memoryOf(R"({"meminfo":{"Cached":-5}})");
    CHECK_FALSE(g.reported);
    g = memoryOf(R"({"meminfo":{"Cached":9007199254740993}})"); // 2^53 + 1
    CHECK_FALSE(g.reported);
    g = memoryOf(R"({"meminfo":{"Cached":9007199254740992}})");
    CHECK(g.pageCacheBytes == 9007199254740992ULL);

    // A namespace listed twice counts once; a mount that is not DAX counts not.
    g = memoryOf(
        R"({"meminfo":{"Cached":1},
            "mounts":[{"blockdev":"pmem0","verdict":{"code":"dax_active"}},
                      {"blockdev":"pmem1","verdict":{"code":"dax_silently_off"}},
                      {"blockdev":"pmem0","verdict":{"code":"dax_per_file"}}],
            "namespaces":[{"blockdev":"pmem0","size":4096},{"blockdev":"pmem0","size":4096},
                          {"blockdev":"pmem1","size":8192},{"blockdev":"pmem2","size":1.5}]})");
    CHECK(g.daxMountBytes == 4096);
    CHECK(memoryOf("not json at all").reported == false);
    CHECK(memoryOf(R"([{"meminfo":{"Cached":1}}])").reported == false);
}

TEST_CASE("backing files from a QEMU command line", "[collector][ledger]")
{
    auto f = parseBackingFiles(
        {"qemu",
         "-object",
         "memory-backend-file,id=m1,share=on,mem-path=/img/a.img,size=1G",
         "-device",
         "nvdimm,memdev=m1",
         "-object",
         R"({"qom-type":"memory-backend-file","id":"vp","mem-path":"/img/b.img"})",
         "-device",
         R"({"driver":"virtio-pmem-pci","memdev":"vp"})",
         "-object",
         "memory-backend-file,id=ram,mem-path=/dev/hugepages/r,size=1G",
         "-drive",
         "file=/img/root.qcow2,format=qcow2,if=virtio",
         "-drive",
         "file=nbd:localhost:1",
         "-drive",
         "file=relative.img",
         "-blockdev",
         R"({"driver":"file","filename":"/img/c.raw","node-name":"f0"})",
         "-drive",
         "file=/img/a.img,readonly=on"});
    REQUIRE(f.size() == 5);
    CHECK(f[0].path == "/img/a.img");
    CHECK(f[0].role == "nvdimm");
    CHECK(f[1].role == "virtio-pmem-pci");
    CHECK(f[2].role == "memory");
    CHECK(f[3].path == "/img/root.qcow2");
    CHECK(f[3].format == "qcow2");
    CHECK(f[4].path == "/img/c.raw");
}

TEST_CASE("backing files measured on this host", "[collector][ledger]")
{
    TempDir dir;
    REQUIRE(!dir.path().empty());
    std::string data = dir.path() + "/data.img";
    writeFile(data, std::string(1 << 20, 'x'));
    writeFile(dir.path() + "/base.img", std::string(4096, 'b'));
    writeFile(dir.path() + "/overlay.qcow2", qcow2Header("base.img"));
    writeFile(dir.path() + "/forged.raw", qcow2Header("/etc/hostname"));

    QemuFacts q;
    q.files = parseBackingFiles({"qemu", "-drive", "file=" + data + ",format=raw", "-drive",
                                 "file=" + dir.path() + "/overlay.qcow2,format=qcow2", "-drive",
                                 "file=" + dir.path() + "/forged.raw", "-drive",
                                 "file=" + dir.path() + "/missing.img"});
    measureBackingFiles(q);
    REQUIRE(q.files.size() == 5);
    const auto &d = q.files[0];
    CHECK(d.error.empty());
    CHECK(d.sizeBytes == 1 << 20);
    CHECK(d.cachedBytes == 1 << 20); // just written: all of it in the page cache
    CHECK((d.method == "cachestat" || d.method == "mincore"));
    CHECK(q.files[3].error.find("missing.img") != std::string::npos);
    CHECK(q.files[3].method.empty());
    // The qcow2 overlay's backing file joins; the raw image's forged header does not.
    CHECK(q.files[4].path == dir.path() + "/base.img");
    CHECK(q.files[4].role == "qcow2-backing");
    CHECK(q.files[4].sizeBytes == 4096);

    // Dropped from the page cache: measured as gone, without reading it back in.
    int fd = ::open(data.c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    ::fdatasync(fd);
    REQUIRE(::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0);
    ::close(fd);
    QemuFacts again;
    again.files = parseBackingFiles({"qemu", "-drive", "file=" + data});
    measureBackingFiles(again);
    CHECK(again.files[0].cachedBytes == 0);
}

TEST_CASE("a file shared by several VMs counts once per host", "[collector][ledger]")
{
    auto vm = [](std::string name, std::uint64_t anon, std::vector<LedgerFile> files) {
        LedgerVm v;
        v.vm = std::move(name);
        v.qemuKnown = true;
        v.qemuAnonBytes = anon;
        v.guest.reported = true;
        v.guest.pageCacheBytes = 10;
        v.files = std::move(files);
        return v;
    };
    LedgerFile shared{"/img/shared.img", "nvdimm", 8, 100, 1000, 700, true};
    LedgerFile sharedOtherPath = shared; // a second name (hard link, bind mount) for the file
    sharedOtherPath.path = "/other/shared.img";
    LedgerFile own{"/img/own.img", "drive", 8, 101, 50, 40, true};
    LedgerFile unmeasured{"/img/gone.img", "drive", 0, 0, 0, 0, false};
    Ledger l = buildLedger({vm("a", 300, {shared, own}), vm("b", 200, {sharedOtherPath}),
                            vm("c", 100, {shared, unmeasured})});
    CHECK(l.qemuAnonBytes == 600);
    CHECK(l.guestPageCacheBytes == 30);
    CHECK(l.filesCachedBytes == 740); // 700 once, not three times
    CHECK(l.hostBytes() == 1340);
    REQUIRE(l.files.size() == 2);
    CHECK(l.files[0].vms == std::vector<std::string>{"a", "b", "c"});
    CHECK(l.files[1].vms == std::vector<std::string>{"a"});

    // /metrics shows the same sums; the store's JSON form gives the same VM.
    MetricsRegistry reg;
    for (const auto &v : l.vms)
        reg.update(v.vm, [&](VmMetrics &m) {
            m.guest = v.guest;
            QemuFacts q;
            q.anonBytes = v.qemuAnonBytes;
            for (const auto &f : v.files)
                q.files.push_back({f.path, f.role, "", f.dev, f.ino, f.sizeBytes, f.cachedBytes,
                                   f.measured ? "cachestat" : "", ""});
            m.qemu = q;
            LedgerVm back = ledgerVmOf(v.vm, toJson(q), "");
            CHECK(back.files.size() == v.files.size());
            CHECK(back.qemuAnonBytes == v.qemuAnonBytes);
        });
    std::string page = reg.render();
    CHECK(page.find("\ndaxprobe_host_backing_files_cached_bytes 740\n") != std::string::npos);
    CHECK(page.find("\ndaxprobe_host_vm_memory_bytes 1340\n") != std::string::npos);
    CHECK(page.find("\ndaxprobe_host_backing_file_vms{path=\"/img/shared.img\"} 3\n") !=
          std::string::npos);
    CHECK(page.find("\ndaxprobe_host_guest_page_cache_bytes 30\n") != std::string::npos);
}

TEST_CASE("a pmem backing file's page cache read around what QEMU maps", "[collector][ledger]")
{
    // A real QEMU's /proc (fixtures/qemu-readaround/README.md) and the file's
    // page cache fincore measured at the same moment: 167772160 bytes.
    auto root = daxprobe::Root::open(COLLECTOR_FIXTURES "/qemu-readaround");
    REQUIRE(root);
    QemuFacts q = readQemuFacts(*root, 9121);
    CHECK(q.errors.empty());
    REQUIRE(q.backends.size() == 1);
    CHECK(q.backends[0].hugepageAdvised); // VmFlags ... hg
    CHECK(q.backends[0].residentBytes == 2560ull * 1024);
    REQUIRE(q.files.size() == 1);
    BackingFile &f = q.files[0];
    f.dev = 0x700;
    f.ino = 12;
    f.sizeBytes = 256ull << 20;
    f.cachedBytes = 167772160;
    f.method = "cachestat";
    f.readAheadKb = 128;
    f.readAheadPath = "/sys/dev/block/7:0/queue/read_ahead_kb";
    Ledger l = buildLedger({ledgerVmOf("vm0", toJson(q), "")});
    REQUIRE(l.files.size() == 1);
    const LedgerHostFile &h = l.files[0];
    CHECK(h.file.pmemBacking);
    CHECK(h.file.mappedBytes == 2560ull * 1024);
    REQUIRE(h.readAround);
    CHECK(h.readAround->extraBytes == 167772160 - 2560ull * 1024);
    // read_ahead_kb is 128 here: the cause is QEMU's advice, and the remedy
    // is not a smaller read_ahead_kb (it changed nothing, measured).
    CHECK_THAT(h.readAround->cause, Catch::Contains("160.0 MiB of host page cache for 2.5 MiB"));
    CHECK_THAT(h.readAround->cause, Catch::Contains("MADV_HUGEPAGE"));
    CHECK_THAT(h.readAround->remedy,
               Catch::Contains("dd if='/mnt/costs-ra/pmem.img' iflag=nocache count=0"));
    CHECK_THAT(h.readAround->remedy, !Catch::Contains("read_ahead_kb"));
    std::string table = ledgerTable(l);
    CHECK_THAT(table, Catch::Contains("pmem backing: QEMU maps 2.5 MiB of it"));
    CHECK_THAT(table, Catch::Contains("read-around: 160.0 MiB"));
    MetricsRegistry reg;
    reg.update("vm0", [&](VmMetrics &m) { m.qemu = q; });
    std::string page = reg.render();
    // /metrics builds its ledger from the facts themselves: the same figures.
    CHECK_THAT(page, Catch::Contains("daxprobe_host_backing_file_mapped_bytes{path=\"/mnt/costs-ra/"
                                     "pmem.img\"} 2621440\n"));
    CHECK_THAT(page, Catch::Contains("daxprobe_host_backing_file_read_around_bytes{path=\"/mnt/"
                                     "costs-ra/pmem.img\"} 165150720\n"));
    auto j = nlohmann::json::parse(ledgerJson(l));
    CHECK(j["host"]["backing_files"][0]["mapped_bytes"] == 2560 * 1024);
    CHECK(j["host"]["backing_files"][0]["read_around"]["extra_bytes"] == 167772160 - 2560 * 1024);

    // Without QEMU's advice (another VMM) the device's read-ahead is the window.
    q.backends[0].hugepageAdvised = false;
    Ledger plain = buildLedger({ledgerVmOf("vm0", toJson(q), "")});
    REQUIRE(plain.files[0].readAround);
    // 128 already: nothing to lower, only the release
    CHECK_THAT(plain.files[0].readAround->remedy, !Catch::Contains("echo 128"));
    CHECK_THAT(plain.files[0].readAround->remedy, Catch::Contains("iflag=nocache"));
    f.readAheadKb = 8192;
    plain = buildLedger({ledgerVmOf("vm0", toJson(q), "")});
    CHECK_THAT(plain.files[0].readAround->remedy,
               Catch::Contains("echo 128 > /sys/dev/block/7:0/queue/read_ahead_kb"));

    // What QEMU maps is not read around: no line when the cache is close to it.
    f.cachedBytes = 4ull << 20;
    CHECK_FALSE(buildLedger({ledgerVmOf("vm0", toJson(q), "")}).files[0].readAround);
    // A window's worth above it, but not more than it maps: no line either.
    CHECK_FALSE(judgeReadAround({"/img", 12ull << 20, 8ull << 20, true, std::nullopt, ""}));
    CHECK(judgeReadAround({"/img", 17ull << 20, 8ull << 20, true, std::nullopt, ""}));
}
