#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "base/root.h"
#include "probes/readers/blockdev.h"
#include "probes/readers/fault_sources.h"
#include "tests/unit/probes/temp_tree.h"

using namespace daxprobe;
namespace fs = std::filesystem;

TEST_CASE("Root reads relative to its directory", "[root]")
{
    TempTree t;
    t.write("sys/class/block/pmem0/queue/dax", "1\n");
    t.write("sys/class/block/pmem0/dev", "259:0\n");
    t.write("sys/class/block/vda/queue/dax", "0\n");
    t.write("sys/class/block/odd/queue/dax", "yes\n");
    t.write("sys/class/block/odd/dev", "259\n");
    auto root = Root::open(t.dir.string());
    REQUIRE(root);

    CHECK(*root->readAttr("/sys/class/block/pmem0/queue/dax") == "1");
    CHECK(*root->readFile("sys/class/block/pmem0/queue/dax") == "1\n");
    CHECK(readQueueDax(*root, "pmem0") == std::optional<bool>(true));
    CHECK(readQueueDax(*root, "vda") == std::optional<bool>(false));
    CHECK_FALSE(readQueueDax(*root, "odd").has_value());
    CHECK_FALSE(readQueueDax(*root, "missing").has_value());
    auto number = readBlockDevNumber(*root, "pmem0");
    REQUIRE(number);
    CHECK(number->first == 259);
    CHECK(number->second == 0);
    CHECK_FALSE(readBlockDevNumber(*root, "odd"));
    CHECK(root->exists("sys/class/block"));
    CHECK_FALSE(root->exists("proc"));
}

TEST_CASE("Root errors name the file and the errno", "[root]")
{
    TempTree t;
    t.write("big", std::string(5000, 'x'));
    t.write("num", "42\n");
    t.write("notnum", "42abc\n");
    auto root = Root::open(t.dir.string());
    REQUIRE(root);
    auto missing = root->readFile("proc/meminfo");
    REQUIRE_FALSE(missing);
    CHECK(missing.error().code == ENOENT);
    CHECK_THAT(missing.error().describe(), Catch::Contains("proc/meminfo"));
    auto tooBig = root->readFile("big", 4096);
    REQUIRE_FALSE(tooBig);
    CHECK(tooBig.error().code == EFBIG);
    CHECK(*root->readUnsigned("num") == 42);
    CHECK_FALSE(root->readUnsigned("notnum"));
    CHECK_FALSE(Root::open((t.dir / "nope").string()));
}

TEST_CASE("Root hands every successful read to its recorder", "[root]")
{
    TempTree t;
    t.write("proc/meminfo", "Cached: 1 kB\n");
    auto root = Root::open(t.dir.string());
    REQUIRE(root);
    std::map<std::string, std::string> seen;
    root->setRecorder([&](const std::string &p, std::string_view c) { seen[p] = std::string(c); });
    CHECK(root->readFile("/proc/meminfo"));
    CHECK_FALSE(root->readFile("proc/vmstat"));
    REQUIRE(seen.size() == 1);
    CHECK(seen["proc/meminfo"] == "Cached: 1 kB\n");
}

namespace
{
int g_perfProbes = 0;
int g_tracepointProbes = 0;
PerfAvailability countedPerfProbe(const Root &)
{
    ++g_perfProbes;
    PerfAvailability a;
    a.observe();
    return a;
}
bool g_tracefsFound = true;
TracepointAvailability countedTracepointProbe(const Root &)
{
    ++g_tracepointProbes;
    TracepointAvailability a;
    if (g_tracefsFound)
        a.observe();
    else
        a.fail("tracefs not mounted");
    a.tracefs = "/sys/kernel/tracing";
    return a;
}
} // namespace

TEST_CASE("the perf probe's answer is kept until perf_event_paranoid changes", "[root][perf]")
{
    TempTree t;
    t.write("proc/sys/kernel/perf_event_paranoid", "2\n");
    auto root = Root::open(t.dir.string());
    REQUIRE(root);
    g_perfProbes = 0;
    FaultProbeCache cache(countedPerfProbe, countedTracepointProbe);
    CHECK(cache.perf(*root).observed());
    CHECK(cache.perf(*root).observed());
    CHECK(g_perfProbes == 1); // the second check asked no counter of the kernel
    t.write("proc/sys/kernel/perf_event_paranoid", "1\n"); // the remedy applied
    (void)cache.perf(*root);
    CHECK(g_perfProbes == 2);
    (void)cache.perf(*root);
    CHECK(g_perfProbes == 2);
}

TEST_CASE("found tracepoints are kept while their directory is there", "[root][perf]")
{
    TempTree t;
    t.write("sys/kernel/tracing/events/fs_dax/enable", "0\n");
    auto root = Root::open(t.dir.string());
    REQUIRE(root);
    g_tracepointProbes = 0;
    g_tracefsFound = true;
    FaultProbeCache cache(countedPerfProbe, countedTracepointProbe);
    CHECK(cache.tracepoints(*root).observed());
    CHECK(cache.tracepoints(*root).observed());
    CHECK(g_tracepointProbes == 1);                      // available_events not read again
    fs::remove_all(t.dir / "sys/kernel/tracing/events"); // tracefs unmounted
    g_tracefsFound = false;
    CHECK_FALSE(cache.tracepoints(*root).observed());
    CHECK(g_tracepointProbes == 2);
    // Not found: looked for on every check (tracefs may be mounted later).
    CHECK_FALSE(cache.tracepoints(*root).observed());
    CHECK(g_tracepointProbes == 3);
    t.write("sys/kernel/tracing/events/fs_dax/enable", "0\n"); // mounted again
    g_tracefsFound = true;
    CHECK(cache.tracepoints(*root).observed());
    CHECK(cache.tracepoints(*root).observed());
    CHECK(g_tracepointProbes == 4);
}
