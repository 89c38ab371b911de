// change_floor: the floor of bench/change_bench.py, in the same guest as
// `daxprobe agent`: the fastest a program can tell the host that the state
// the bench changes has changed.
//
//   change_floor PORT
//
// It listens on the agent's kernel signals (a NETLINK_KOBJECT_UEVENT socket,
// POLLPRI on /proc/self/mountinfo) and reads the badblocks file every 10 ms
// (a write there notifies nobody: block/genhd.c). On each signal it reads only
// what that signal can have changed and, when the state differs from the last
// line, writes one line on PORT (a virtio-serial port; the host timestamps
// its arrival):
//   state mount=dax|nodax|none ns=MODE|none dax=DRIVER|none bb=SECTORS|none
// mount: /mnt/pmem in mountinfo, dax when its super options say dax[=always];
// ns: namespace0.0's mode from its holder (fsdax, devdax, sector, raw); dax: the driver
// dax0.0 is bound to (kmem is daxctl's system-ram); bb: the sectors listed in
// /sys/block/pmem0/badblocks. A line "ping N" from the host is answered at
// once with "pong N": the host's estimate of this line's own delivery.
//
// Only libc, one read per file: the floor must cost nothing beyond the
// kernel's own answer (a bench helper, not the agent: no Root, no Result).
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <linux/netlink.h>
#include <poll.h>
#include <string>
#include <string_view>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bench/floor_write.h"

namespace
{

constexpr int kBadblocksPeriodMs = 10;
constexpr std::string_view kMountField = "/mnt/pmem "; // the mount point, then a space

// The file's text; false when it cannot be opened (the device is gone).
bool readFile(const char *path, std::string &s)
{
    s.clear();
    int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    char buf[4096];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        s.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    return true;
}

// mountinfo: "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS] - FSTYPE SOURCE SUPEROPTS".
// The last mount on /mnt/pmem is the visible one.
std::string mountState(const std::string &info)
{
    std::string state = "none";
    size_t pos = 0;
    while (pos < info.size()) {
        size_t end = info.find('\n', pos);
        if (end == std::string::npos)
            end = info.size();
        std::string line = info.substr(pos, end - pos);
        pos = end + 1;
        size_t f = 0;
        for (int i = 0; i < 4 && f != std::string::npos; ++i)
            f = line.find(' ', f + 1);
        if (f == std::string::npos || line.compare(f + 1, kMountField.size(), kMountField) != 0)
            continue;
        size_t sep = line.find(" - ");
        size_t opts = sep == std::string::npos ? sep : line.rfind(' ');
        std::string super = opts == std::string::npos ? "" : "," + line.substr(opts + 1) + ",";
        state = super.find(",dax,") != std::string::npos ||
                        super.find(",dax=always,") != std::string::npos
                    ? "dax"
                    : "nodax";
    }
    return state;
}

// The namespace's mode as ndctl names it, from its claim (the holder device),
// as the agent derives it: its sysfs "mode" says "memory" for a raw namespace
// too, which would show fsdax before ndctl had made it.
std::string nsMode()
{
    std::string s;
    if (!readFile("/sys/bus/nd/devices/namespace0.0/holder", s))
        return "none";
    if (s.rfind("pfn", 0) == 0)
        return "fsdax";
    if (s.rfind("dax", 0) == 0)
        return "devdax";
    if (s.rfind("btt", 0) == 0)
        return "sector";
    return "raw";
}

std::string daxDriver()
{
    char buf[256];
    ssize_t n = ::readlink("/sys/bus/dax/devices/dax0.0/driver", buf, sizeof(buf) - 1);
    if (n <= 0)
        return "none";
    buf[n] = '\0';
    const char *base = std::strrchr(buf, '/');
    return base ? base + 1 : buf;
}

// "SECTOR LENGTH" per line: the sectors listed, "none" without the file.
std::string badSectors()
{
    std::string s;
    if (!readFile("/sys/block/pmem0/badblocks", s))
        return "none";
    unsigned long long total = 0, sector = 0, len = 0;
    const char *p = s.c_str();
    int used = 0;
    while (std::sscanf(p, "%llu %llu%n", &sector, &len, &used) == 2) {
        total += len;
        p += used;
    }
    return std::to_string(total);
}

bool writeLine(int fd, const std::string &s)
{
    return writeAll(fd, s.data(), s.size());
}

long long nowMs()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<long long>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

struct State {
    std::string mount = "none", ns = "none", dax = "none", bb = "none";
    std::string line() const
    {
        return "state mount=" + mount + " ns=" + ns + " dax=" + dax + " bb=" + bb + "\n";
    }
};

int run(const char *port)
{
    // Blocking writes (a line is short; the host reads the port all along),
    // reads only when poll says a line is there.
    int fd = ::open(port, O_RDWR | O_CLOEXEC | O_NOCTTY);
    int nl =
        ::socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);
    sockaddr_nl addr{};
    addr.nl_family = AF_NETLINK;
    addr.nl_groups = 1; // the kernel's own uevents, as the agent hears them
    int mfd = ::open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
    if (fd < 0 || nl < 0 || mfd < 0 ||
        ::bind(nl, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) < 0) {
        std::fprintf(stderr, "change_floor: %s: %s\n", port, std::strerror(errno));
        return 1;
    }
    State st;
    std::string info;
    readFile("/proc/self/mountinfo", info);
    st.mount = mountState(info);
    st.ns = nsMode();
    st.dax = daxDriver();
    st.bb = badSectors();
    std::string sent = st.line();
    writeLine(fd, sent);
    std::string in;
    long long nextTick = nowMs() + kBadblocksPeriodMs;
    char buf[8192];
    for (;;) {
        int wait = static_cast<int>(nextTick - nowMs());
        pollfd p[3] = {{nl, POLLIN, 0}, {mfd, POLLPRI, 0}, {fd, POLLIN, 0}};
        if (::poll(p, 3, wait > 0 ? wait : 0) < 0 && errno != EINTR)
            return 1;
        if (p[0].revents & POLLIN) {
            while (::recv(nl, buf, sizeof(buf), 0) > 0) {
            }
            st.ns = nsMode();
            st.dax = daxDriver();
            st.bb = badSectors();
        }
        if (p[1].revents & POLLPRI) {
            // Re-reading the file re-arms POLLPRI (mnt_namespace's event).
            ::lseek(mfd, 0, SEEK_SET);
            info.clear();
            ssize_t n;
            while ((n = ::read(mfd, buf, sizeof(buf))) > 0)
                info.append(buf, static_cast<size_t>(n));
            st.mount = mountState(info);
        }
        if (p[2].revents & POLLIN) {
            ssize_t n = ::read(fd, buf, sizeof(buf));
            if (n > 0)
                in.append(buf, static_cast<size_t>(n));
            for (size_t e; (e = in.find('\n')) != std::string::npos; in.erase(0, e + 1))
                if (in.compare(0, 5, "ping ") == 0)
                    writeLine(fd, "pong " + in.substr(5, e - 5) + "\n");
        } else if (p[2].revents & POLLHUP) {
            // No host on the port: the bench connects before starting us,
            // so this is rare; the tick below paces the loop.
            ::poll(nullptr, 0, kBadblocksPeriodMs);
        }
        if (nowMs() >= nextTick) {
            st.bb = badSectors();
            nextTick = nowMs() + kBadblocksPeriodMs;
        }
        std::string line = st.line();
        if (line != sent && writeLine(fd, line))
            sent = line;
    }
}

} // namespace

int main(int argc, char **argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: change_floor PORT\n");
        return 2;
    }
    return run(argv[1]);
}
