#include "probes/readers/mount_lines.h"

#include "probes/readers/text_util.h"

namespace daxprobe
{

namespace
{

bool has(std::string_view s, std::string_view needle)
{
    return s.find(needle) != std::string_view::npos;
}

} // namespace

MountLifecycle mountLifecycleOf(std::string_view m)
{
    if (has(m, "mounted filesystem") || has(m, "re-mounted") || has(m, "Ending clean mount") ||
        has(m, "Ending recovery"))
        return MountLifecycle::Mounted;
    if (containsNoCase(m, "unmounting filesystem"))
        return MountLifecycle::Unmounted;
    if (has(m, "log mount failed") || has(m, "SB validate failed") ||
        has(m, "VFS: Can't find ext4 filesystem"))
        return MountLifecycle::Failed;
    return MountLifecycle::None;
}

bool isMountLifecycle(std::string_view message)
{
    if (!(message.starts_with("EXT4-fs (") || message.starts_with("XFS (")))
        return false;
    return mountLifecycleOf(message) != MountLifecycle::None;
}

} // namespace daxprobe
