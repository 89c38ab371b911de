#include "agent/daemon/uevent_namespace.h"

#include <fcntl.h>
#include <linux/nsfs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <cerrno>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "base/result.h"
#include "base/unique_fd.h"

namespace daxprobe
{

namespace
{

// The initial user namespace's inode number is fixed
// (include/linux/proc_ns.h PROC_USER_INIT_INO, since 3.8); the others are
// allocated from 0xF0000000 up, so no other user namespace can have it.
constexpr ino_t kInitialUserNsIno = 0xEFFFFFFDU;

} // namespace

// Read from this process's own /proc/self, not through the Root of the
// tree examined: the question is about the namespace the netlink socket
// lives in, which a --root tree cannot stand for.
std::optional<std::string> ueventsNotDelivered()
{
    UniqueFD net(::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC));
    if (!net) {
        spdlog::debug("network namespace not known (/proc/self/ns/net: {})",
                      Error::errnoName(errno));
        return std::nullopt;
    }
    // man ioctl_ns: the owner of a namespace, if it is our own user
    // namespace or one below it. EPERM: it is above ours (`unshare -U`
    // keeps the network namespace of the parent user namespace), out of
    // sight: usually the initial one, though a container's nested user
    // namespace looks the same, so nothing is claimed. ENOTTY: before 4.9.
    UniqueFD owner(::ioctl(net.get(), NS_GET_USERNS));
    if (!owner) {
        spdlog::debug("owner of the network namespace not known (NS_GET_USERNS: {})",
                      Error::errnoName(errno));
        return std::nullopt;
    }
    struct stat st = {};
    if (::fstat(owner.get(), &st) < 0 || st.st_ino == kInitialUserNsIno)
        return std::nullopt;
    return fmt::format("network namespace owned by user namespace {}, not the initial one: "
                       "the kernel sends it no uevents",
                       st.st_ino);
}

} // namespace daxprobe
