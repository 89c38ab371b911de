#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "probes/readers/kmsg.h"

namespace daxprobe
{

// What a kernel line says about one mount attempt of its device. The kernel
// logs every mount of a device, so a line describes the attempt that logged
// it, never a later mount of the same device.
enum class MountEvent {
    None,
    DaxRefused,   // ext4 "DAX unsupported by block device." (dax_refusals.h): that mount failed
    DaxTurnedOff, // XFS "... Turning off DAX.": the mount went on without DAX
    Failed,       // the lifecycle lines of readers/mount_lines.h
    Mounted,
    Unmounted,
};
MountEvent classifyMountLine(std::string_view message);

struct HistoryLine {
    std::string message;
    std::string attempt; // failed | unmounted | superseded | unfinished
};

// The kernel's lines about `device`, split by mount attempt (in record order).
struct DeviceKmsg {
    std::vector<std::string> current; // the attempt that is mounted now
    std::vector<HistoryLine> history; // DAX lines of earlier attempts
    bool attributed = false;          // a mount of the device was found in the log
};

DeviceKmsg attributeKmsg(const std::vector<KmsgRecord> &records, const std::string &device);

} // namespace daxprobe
