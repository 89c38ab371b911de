#pragma once

#include <string_view>

namespace daxprobe
{

// What a kernel line says about the life of one mount attempt, whatever the
// device. The DAX lines (refused, turned off) are the judges' to read
// (judges/mount_history.h); every one of them also names DAX, so the kmsg
// reader keeps them as DAX-relevant.
enum class MountLifecycle {
    None,
    Mounted,   // ext4 "mounted filesystem", "re-mounted"; XFS "Ending clean mount"
    Unmounted, // XFS "Unmounting Filesystem", ext4 (6.x) "unmounting filesystem"
    Failed,    // a line that ends an attempt in failure
};
MountLifecycle mountLifecycleOf(std::string_view message);

// Lines that mark a mount's start or end of an ext4 or XFS device: the kmsg
// reader keeps them whatever the device is called, so attempts can be told
// apart (judges/mount_history.h).
bool isMountLifecycle(std::string_view message);

} // namespace daxprobe
