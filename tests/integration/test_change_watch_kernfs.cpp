// A watched badblocks file that goes away right after the kernel notified
// it, on real kernfs. sysfs and cgroup2 are both kernfs: a cgroup's
// cgroup.events, bind-mounted where the watch expects
// sys/block/pmem0/badblocks, is notified by a freeze (as the pmem driver
// notifies bb_state) and goes away with an rmdir (as a disk's attributes do
// when it is removed). A removal wakes no poller, but a file notified before
// it then polls EPOLLERR|EPOLLPRI for good (fs/kernfs/file.c kernfs_fop_poll)
// and reads ENODEV: a watch that kept it in its epoll set would wake the
// daemon in a busy loop. Needs root (a mount namespace, a cgroup2 mount):
// otherwise exits 77 saying why. Its own main runs Catch2's implementation,
// compiled once (tests/unit/catch_impl.cpp).
#include <catch2/catch.hpp>

#include "tests/unit/catch_session.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "agent/daemon/change_watch.h"
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

// Undone before the TempTree under it is removed.
struct BindMount {
    std::string target;
    ~BindMount() { ::umount2(target.c_str(), MNT_DETACH); }
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
    return runCatchSession(argc, argv);
}
