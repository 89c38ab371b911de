// The daemon's change watch on a hand-made /sys: badblocks files read on
// its poll, a burst of changes debounced into one due check. (The netlink
// half runs in the guest: tests/vm collector-reconnect.)
#include <catch2/catch.hpp>

#include "agent/daemon/change_watch.h"
#include "tests/unit/probes/temp_tree.h"

using namespace daxprobe;

namespace
{

std::unique_ptr<ChangeWatch> watchTree(const TempTree &t, int pollMs)
{
    auto root = Root::open(t.dir.string());
    REQUIRE(root);
    return ChangeWatch::create(std::move(*root), ChangeWatchOptions{.uevents = false,
                                                                    .quietMs = 100,
                                                                    .maxDelayMs = 300,
                                                                    .badblocksPollMs = pollMs});
}

} // namespace

TEST_CASE("a new bad block is due once the poll saw it and it went quiet", "[changes]")
{
    TempTree t;
    t.write("sys/block/pmem0/badblocks", "");
    t.write("sys/block/vda/badblocks", ""); // not pmem: not watched
    t.write("sys/bus/nd/devices/region0/badblocks", "");
    t.write("sys/bus/nd/devices/ndbus0/badblocks", "");
    auto w = watchTree(t, 500);
    CHECK_FALSE(w->watchingUevents());
    CHECK(w->badblocksFiles() == 2);
    CHECK(w->deadlineMs() == 0); // the first poll at once
    CHECK(w->takeDue(1000).empty());
    CHECK(w->deadlineMs() == 1500);

    t.write("sys/block/pmem0/badblocks", "4096 8\n");
    CHECK(w->takeDue(1499).empty()); // not polled yet
    CHECK(w->takeDue(1500).empty()); // seen, the burst still young
    CHECK(w->deadlineMs() == 1600);
    CHECK(w->takeDue(1600) == "/sys/block/pmem0/badblocks changed");
    CHECK(w->takeDue(2000).empty()); // polled again: same content, nothing due
}

TEST_CASE("a burst that never goes quiet is due at its maximum delay", "[changes]")
{
    TempTree t;
    t.write("sys/bus/nd/devices/region0/badblocks", "");
    auto w = watchTree(t, 50);
    CHECK(w->takeDue(0).empty());
    std::string due;
    std::int64_t at = -1;
    for (std::int64_t now = 50; now <= 400 && due.empty(); now += 50) {
        t.write("sys/bus/nd/devices/region0/badblocks", std::to_string(now) + " 1\n");
        due = w->takeDue(now);
        at = now;
    }
    CHECK(at == 350); // first seen at 50, due 300 ms later, though never quiet
    CHECK(due == "/sys/bus/nd/devices/region0/badblocks changed"); // named once
}

TEST_CASE("without a poll only the kernel's notifications count", "[changes]")
{
    TempTree t;
    t.write("sys/block/pmem0/badblocks", "");
    auto w = watchTree(t, 0);
    t.write("sys/block/pmem0/badblocks", "8 8\n");
    // A regular file never raises POLLPRI: nothing is read, nothing is due.
    w->onReadable(10);
    CHECK(w->takeDue(1000).empty());
    CHECK(w->deadlineMs() == std::numeric_limits<std::int64_t>::max());
}

TEST_CASE("without uevents the poll notes a disk that comes or goes", "[changes]")
{
    TempTree t;
    t.write("sys/block/pmem0/badblocks", "");
    auto w = watchTree(t, 500);
    CHECK(w->takeDue(0).empty());
    t.write("sys/block/pmem1/badblocks", "8 8\n");
    CHECK(w->takeDue(500).empty()); // seen, the burst still young
    CHECK(w->takeDue(600) == "/sys/block/pmem1/badblocks appeared");
    CHECK(w->badblocksFiles() == 2);

    std::filesystem::remove_all(t.dir / "sys/block/pmem0");
    CHECK(w->takeDue(1000).empty());
    CHECK(w->takeDue(1100) == "/sys/block/pmem0/badblocks gone");
    CHECK(w->badblocksFiles() == 1);
}
