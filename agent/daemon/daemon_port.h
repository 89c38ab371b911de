#pragma once

#include <string>
#include <string_view>

#include "base/result.h"
#include "base/root.h"
#include "protocol/schema.h"

namespace daxprobe
{

// Where the virtio-serial port named `name` lives, relative to root:
// /dev/virtio-ports/NAME (udev's symlink) or, without udev, the vportNpM
// whose /sys/class/virtio-ports/*/name matches.
Result<std::string> findVirtioPort(const Root &root, std::string_view name);

// machine-id, hostname and a fresh random stream id, read through root.
protocol::AgentIdentity readIdentity(const Root &root, std::string_view version);

} // namespace daxprobe
