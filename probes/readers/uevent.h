#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/result.h"

namespace daxprobe
{

// The kernel's uevents are at most UEVENT_BUFFER_SIZE (2048) of variables
// plus the "ACTION@DEVPATH" header; anything longer is not the kernel's.
constexpr std::size_t kMaxUeventBytes = 8192;
constexpr std::size_t kMaxUeventFields = 64;

// One NETLINK_KOBJECT_UEVENT datagram from the kernel, the fields the agent
// acts on. The values are the sender's text: shown through printable() only.
struct Uevent {
    std::string action;    // add, remove, change, move, online, offline, bind, unbind
    std::string devpath;   // /devices/... (no /sys)
    std::string subsystem; // nd, dax, cxl, block, ...
    std::string devname;   // pmem0, dax0.0 (optional)
    std::string devtype;   // nd_namespace_io, disk, ... (optional)
};

// "ACTION@DEVPATH\0KEY=VALUE\0..." (lib/kobject_uevent.c). The bytes are
// untrusted: bounded in size and fields; a udev monitor message ("libudev"
// header), a header or variable that is malformed, or one that disagrees
// with ACTION/DEVPATH is an error naming why.
Result<Uevent> parseUevent(std::string_view bytes);

// Whether the event concerns persistent memory: subsystems nd, dax, cxl, block.
bool isPmemUevent(const Uevent &event);

} // namespace daxprobe
