// A watched badblocks file that goes away right after the kernel notified
// it, on real kernfs. sysfs and cgroup2 are both kernfs: a cgroup's
// cgroup.events, bind-mounted where the watch expects
// sys/block/pmem0/badblocks, is notified by a freeze (as the pmem driver
// notifies bb_state) and goes away with an rmdir (as a disk's attributes do
// when it is removed). A removal wakes no poller, but a file notified before
// it then polls EPOLLERR|EPOLLPRI for good (fs/kernfs/file.c kernfs_fop_poll)
// and reads ENODEV: a watch that kept it in its epoll set would wake the
// daemon in a busy loop. And a real disk (a loop disk) that goes and comes
// back under its name, with the kernel's uevents. Needs root (a mount
// namespace, a cgroup2 mount, /dev/loop-control): otherwise exits 77 saying
// why. Its own main runs Catch2's implementation,
// compiled once (tests/unit/catch_impl.cpp).
#include <catch2/catch.hpp>

#include "tests/unit/catch_session.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "agent/daemon/change_watch.h"
#include "base/unique_fd.h"
#include "tests/unit/probes/temp_tree.h"

using namespace daxprobe;

namespace
{

std::string cgroup2Mount; // found by main()

void writeFile(const std::string &path, const std::string &text)
{
    std::ofstream(path) << text;
}

std::int64_t monotonicMs()
{
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// Wakes on the watch's fd for windowMs and handles each wakeup as the
// daemon does; returns how many there were.
int countWakeups(ChangeWatch &w, int windowMs)
{
    int wakeups = 0;
    std::int64_t end = monotonicMs() + windowMs;
    for (std::int64_t now = monotonicMs(); now < end && wakeups < 1000; now = monotonicMs()) {
        pollfd p{w.fd(), POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(end - now)) <= 0)
            continue;
        ++wakeups;
        w.onReadable(monotonicMs());
    }
    return wakeups;
}

// Runs the watch as the daemon does (wakes on its fd or at its deadline)
// until a due check names `what`; returns that check's text, or "" after
// the hang guard.
std::string dueNaming(ChangeWatch &w, const std::string &what)
{
    std::int64_t guard = monotonicMs() + 10000;
    for (std::int64_t now = monotonicMs(); now < guard; now = monotonicMs()) {
        std::int64_t until = std::min(w.deadlineMs(), guard);
        pollfd p{w.fd(), POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(std::max<std::int64_t>(until - now, 0))) > 0)
            w.onReadable(monotonicMs());
        auto due = w.takeDue(monotonicMs());
        if (due.find(what) != std::string::npos)
            return due;
    }
    return {};
}

// Undone before the TempTree under it is removed.
struct BindMount {
    std::string target;
    ~BindMount() { ::umount2(target.c_str(), MNT_DETACH); }
};

// A loop disk of our own (/dev/loop-control), removed at the end if the
// test did not. Only ones this test made are ever removed.
struct LoopDisk {
    UniqueFD control{::open("/dev/loop-control", O_RDWR | O_CLOEXEC)};
    int index = -1;
    LoopDisk()
    {
        REQUIRE(control);
        for (int i = 200 + ::getpid() % 200; index < 0 && i < 1000; ++i)
            if (::ioctl(control.get(), LOOP_CTL_ADD, i) == i)
                index = i;
        REQUIRE(index >= 0);
    }
    ~LoopDisk()
    {
        if (index >= 0)
            ::ioctl(control.get(), LOOP_CTL_REMOVE, index);
    }
    std::string name() const { return "loop" + std::to_string(index); }
    void remove() { REQUIRE(::ioctl(control.get(), LOOP_CTL_REMOVE, index) == 0); }
    void add() { REQUIRE(::ioctl(control.get(), LOOP_CTL_ADD, index) == index); }
    void setReadOnly()
    {
        UniqueFD dev(::open(("/dev/" + name()).c_str(), O_RDONLY | O_CLOEXEC));
        REQUIRE(dev);
        int one = 1;
        REQUIRE(::ioctl(dev.get(), BLKROSET, &one) == 0);
    }
};

// A cgroup of our own, removed at the end if the test did not.
struct Cgroup {
    std::string dir = cgroup2Mount + "/daxprobe-watch-" + std::to_string(::getpid());
    Cgroup() { REQUIRE(::mkdir(dir.c_str(), 0755) == 0); }
    ~Cgroup()
    {
        writeFile(dir + "/cgroup.freeze", "0");
        ::rmdir(dir.c_str());
    }
};

} // namespace

TEST_CASE("a badblocks file removed after a notification leaves the epoll set", "[kernfs]")
{
    Cgroup cg;
    TempTree t;
    t.write("sys/block/pmem0/badblocks", "");
    std::string target = (t.dir / "sys/block/pmem0/badblocks").string();
    std::string events = cg.dir + "/cgroup.events";
    REQUIRE(::mount(events.c_str(), target.c_str(), nullptr, MS_BIND, nullptr) == 0);
    BindMount mounted{target};
    auto root = Root::open(t.dir.string());
    REQUIRE(root);
    auto w = ChangeWatch::create(std::move(*root), ChangeWatchOptions{.uevents = false,
                                                                      .quietMs = 10,
                                                                      .maxDelayMs = 30,
                                                                      .badblocksPollMs = 0});
    CHECK(w->badblocksFiles() == 1);
    CHECK(countWakeups(*w, 100) == 0); // not notified: quiet

    // Notified and alive: one wakeup, the re-read ends it.
    writeFile(cg.dir + "/cgroup.freeze", "1");
    CHECK(countWakeups(*w, 200) == 1);
    CHECK(w->takeDue(monotonicMs() + 1000) == "/sys/block/pmem0/badblocks changed");

    // Notified, then gone before the watch read it: one wakeup finds it
    // dead and drops it; kept, it would wake every epoll_wait (the 1000 cap).
    writeFile(cg.dir + "/cgroup.freeze", "0");
    REQUIRE(::rmdir(cg.dir.c_str()) == 0);
    CHECK(countWakeups(*w, 300) == 1);
    CHECK(w->takeDue(monotonicMs() + 1000) == "/sys/block/pmem0/badblocks gone");
    CHECK(countWakeups(*w, 100) == 0); // the rescan after it added nothing dead
}

// A real disk removed and added again under its name, as create-namespace
// -f does to pmem0 in one uevent burst. Its badblocks file is a loop
// disk's `ro` attribute bind-mounted in place: kernfs, removed with its
// disk, and changed by BLKROSET (this kernel shows a disk's badblocks file
// only when its driver keeps a list, block/genhd.c disk_visible, and loop
// keeps none). The remove uevent makes the check and the rescan; the dead
// file must not stay at the path: kept, the new disk's changes would read
// ENODEV ("gone") and its notifications never wake the watch.
TEST_CASE("a disk removed and added again under its name is watched anew", "[kernfs]")
{
    LoopDisk disk;
    TempTree t;
    t.write("sys/block/pmem0/badblocks", "");
    std::string target = (t.dir / "sys/block/pmem0/badblocks").string();
    std::string ro = "/sys/block/" + disk.name() + "/ro";
    REQUIRE(::mount(ro.c_str(), target.c_str(), nullptr, MS_BIND, nullptr) == 0);
    BindMount mounted{target};
    auto root = Root::open(t.dir.string());
    REQUIRE(root);
    // The poll (every 2 s) comes after the burst's rescan (at most 300 ms
    // after the remove), so it is the rescan that has to find the new disk.
    auto w = ChangeWatch::create(std::move(*root), ChangeWatchOptions{.uevents = true,
                                                                      .quietMs = 100,
                                                                      .maxDelayMs = 300,
                                                                      .badblocksPollMs = 2000});
    REQUIRE(w->watchingUevents());
    CHECK(w->badblocksFiles() == 1);
    CHECK(w->takeDue(monotonicMs()).empty()); // the first poll: as it was

    disk.remove();
    disk.add();
    REQUIRE(::umount2(target.c_str(), MNT_DETACH) == 0);
    REQUIRE(::mount(ro.c_str(), target.c_str(), nullptr, MS_BIND, nullptr) == 0);
    CHECK_THAT(dueNaming(*w, "uevent remove block " + disk.name()),
               Catch::Contains("uevent add block " + disk.name()));
    CHECK(w->badblocksFiles() == 1);

    disk.setReadOnly();
    CHECK(dueNaming(*w, "/sys/block/pmem0/badblocks") == "/sys/block/pmem0/badblocks changed");
}

namespace
{

// The cgroup2 mount point, from /proc/self/mounts; empty if there is none.
std::string findCgroup2()
{
    std::ifstream in("/proc/self/mounts");
    std::string dev, dir, type, rest;
    while (in >> dev >> dir >> type && std::getline(in, rest))
        if (type == "cgroup2")
            return dir;
    return {};
}

} // namespace

int main(int argc, char **argv)
{
    // A private mount namespace: the bind mount never shows outside this
    // process, and goes with it.
    if (::unshare(CLONE_NEWNS) != 0 ||
        ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
        std::printf("SKIP: no mount namespace (needs root / CAP_SYS_ADMIN): %s\n",
                    std::strerror(errno));
        return 77;
    }
    cgroup2Mount = findCgroup2();
    if (cgroup2Mount.empty() || ::access(cgroup2Mount.c_str(), W_OK) != 0) {
        std::printf("SKIP: no writable cgroup2 mount (the kernfs files to remove)\n");
        return 77;
    }
    if (::access("/dev/loop-control", W_OK) != 0) {
        std::printf("SKIP: no /dev/loop-control (the disk to remove)\n");
        return 77;
    }
    return runCatchSession(argc, argv);
}
