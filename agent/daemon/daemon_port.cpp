#include "agent/daemon/daemon_port.h"

#include <cerrno>
#include <sys/random.h>

#include <fmt/format.h>

namespace daxprobe
{

Result<std::string> findVirtioPort(const Root &root, std::string_view name)
{
    // A name with '/' or ".." could walk out of /dev/virtio-ports.
    if (name.empty() || name.find('/') != std::string_view::npos || name == "." || name == "..")
        return failf(EINVAL, "bad virtio port name '{}'", name);
    std::string byName = fmt::format("/dev/virtio-ports/{}", name);
    if (root.exists(byName))
        return byName;
    auto ports = root.listDir("/sys/class/virtio-ports");
    if (!ports)
        return failf(ENOENT, "no virtio port named {} (no /sys/class/virtio-ports: {})", name,
                     ports.error().describe());
    for (const auto &vport : *ports) {
        auto n = root.readAttr(fmt::format("/sys/class/virtio-ports/{}/name", vport));
        if (n && *n == name)
            return fmt::format("/dev/{}", vport);
    }
    return failf(ENOENT, "no virtio port named {}", name);
}

namespace
{

std::string randomStream()
{
    unsigned char b[8] = {};
    // Uniqueness across restarts is what matters; on failure mix in the clock.
    if (::getrandom(b, sizeof(b), GRND_NONBLOCK) != static_cast<ssize_t>(sizeof(b))) {
        timespec ts{};
        clock_gettime(CLOCK_REALTIME, &ts);
        unsigned long long v = static_cast<unsigned long long>(ts.tv_sec) * 1000000007ULL ^
                               static_cast<unsigned long long>(ts.tv_nsec) ^
                               (static_cast<unsigned long long>(getpid()) << 32);
        for (int i = 0; i < 8; ++i)
            b[i] = static_cast<unsigned char>(v >> (8 * i));
    }
    std::string s;
    for (unsigned char c : b)
        s += fmt::format("{:02x}", c);
    return s;
}

} // namespace

protocol::AgentIdentity readIdentity(const Root &root, std::string_view version)
{
    protocol::AgentIdentity id;
    auto mid = root.readAttr("/etc/machine-id");
    if (!mid)
        mid = root.readAttr("/var/lib/dbus/machine-id");
    id.machineId = mid ? protocol::sanitizeIdentifier(*mid, 64) : "";
    auto host = root.readAttr("/proc/sys/kernel/hostname");
    id.hostname = host ? protocol::sanitizeIdentifier(*host, 255) : "";
    id.stream = randomStream();
    id.version = std::string(version);
    return id;
}

} // namespace daxprobe
