#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "agent/daemon/daemon_port.h"
#include "tests/unit/collector/tmpdir.h"

using namespace daxprobe;
namespace fs = std::filesystem;

namespace
{
void put(const std::string &path, const std::string &text)
{
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path) << text;
}
} // namespace

TEST_CASE("virtio port found by name through sysfs when udev has not run", "[agent][port]")
{
    TempDir dir;
    put(dir.path() + "/sys/class/virtio-ports/vport0p1/name", "org.daxprobe.results\n");
    put(dir.path() + "/sys/class/virtio-ports/vport0p2/name", "org.daxprobe.agent.0\n");
    auto root = Root::open(dir.path());
    REQUIRE(root);
    auto p = findVirtioPort(*root, "org.daxprobe.agent.0");
    REQUIRE(p);
    CHECK(*p == "/dev/vport0p2");
    CHECK_FALSE(findVirtioPort(*root, "org.qemu.guest_agent.0"));
    CHECK_FALSE(findVirtioPort(*root, "../etc/passwd"));
}

TEST_CASE("udev's /dev/virtio-ports link wins", "[agent][port]")
{
    TempDir dir;
    put(dir.path() + "/dev/virtio-ports/org.daxprobe.agent.0", "");
    auto root = Root::open(dir.path());
    REQUIRE(root);
    auto p = findVirtioPort(*root, "org.daxprobe.agent.0");
    REQUIRE(p);
    CHECK(*p == "/dev/virtio-ports/org.daxprobe.agent.0");
}

TEST_CASE("identity from machine-id and hostname, fresh stream each time", "[agent][port]")
{
    TempDir dir;
    put(dir.path() + "/etc/machine-id", "0123456789abcdef0123456789abcdef\n");
    put(dir.path() + "/proc/sys/kernel/hostname", "guest-7\n");
    auto root = Root::open(dir.path());
    REQUIRE(root);
    auto a = readIdentity(*root, "1.2");
    auto b = readIdentity(*root, "1.2");
    CHECK(a.machineId == "0123456789abcdef0123456789abcdef");
    CHECK(a.hostname == "guest-7");
    CHECK(a.version == "1.2");
    CHECK(a.stream.size() == 16);
    CHECK(a.stream != b.stream);
}
