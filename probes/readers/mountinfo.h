#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace daxprobe
{

// One line of /proc/self/mountinfo (proc(5)), octal escapes decoded.
struct MountEntry {
    int mountId = 0;
    int parentId = 0;
    unsigned major = 0;
    unsigned minor = 0;
    std::string root;
    std::string mountPoint;
    std::string mountOptions; // per-mount: rw, relatime, ...
    std::string fstype;
    std::string source;
    std::string superOptions; // per-superblock: where dax=... lives
};

enum class DaxOption { None, Always, Inode, Never };

Result<std::vector<MountEntry>> parseMountinfo(std::string_view text);

// The dax setting the kernel shows for this mount. ext4 and xfs print
// "dax=always"/"dax=never"/"dax=inode"; old kernels print a bare "dax".
// XFS shows nothing for dax=inode (its default), so None can mean inode there.
DaxOption daxOption(const MountEntry &mount);
const char *daxOptionName(DaxOption option);
// "ro" in the mount's or the superblock's options: nothing is written there.
bool mountedReadOnly(const MountEntry &mount);

} // namespace daxprobe
