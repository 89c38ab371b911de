#pragma once

#include <optional>
#include <string>

#include "base/root.h"
#include "probes/readers/topology.h"

namespace daxprobe
{

// The device-DAX device `devPath` (a sysfs directory daxN.M) as `daxctl list`
// shows it: size, align, target node, and the driver bound to it, which is
// its mode: device_dax is "devdax", kmem is "system-ram" (the memory went to
// the page allocator: its memory blocks, how many are online, and whether
// they are in ZONE_MOVABLE). No driver: mode empty, state "disabled".
DaxDevice readDaxDevice(const Root &root, const std::string &devPath, const std::string &chardev);

// "0000002a" (sysfs memory attributes are hex without a prefix).
std::optional<std::uint64_t> parseHex(std::string_view s);

} // namespace daxprobe
