#pragma once

#include <optional>
#include <string>

namespace daxprobe
{

// Why the kernel's device uevents never reach a NETLINK_KOBJECT_UEVENT
// socket of this process, when that is known; nullopt when they do or when
// it cannot be told. lib/kobject_uevent.c (uevent_net_init) broadcasts them
// only into network namespaces owned by the initial user namespace; in one
// owned by another (`unshare -Urn`, a rootless container) bind() succeeds
// and nothing ever arrives.
std::optional<std::string> ueventsNotDelivered();

} // namespace daxprobe
