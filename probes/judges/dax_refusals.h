#pragma once

#include <string>
#include <string_view>

#include "probes/judges/remedies.h"

namespace daxprobe
{

// The kernel's own words for "this filesystem cannot do DAX" (fs/ext4/super.c,
// fs/xfs/xfs_super.c; the same on Debian's 6.1, 6.12 and 7.2), each with its
// cause and the command that removes it. The device's refusal ("DAX
// unsupported by block device") is not here: its remedy depends on the
// namespace (verdict.cpp).
struct DaxRefusal {
    enum class Outcome {
        Fails,  // the mount attempt failed
        DaxOff, // the mount went on without DAX (XFS)
        Note,   // logged by every mount of such a filesystem; another line decides
    };
    const char *message; // what the kernel logs (a substring of the line)
    Outcome outcome;
    const char *cause; // why, in words
    std::string (*remedy)(const MountTarget &t);
};

// The refusal a kernel line reports, or null.
const DaxRefusal *findDaxRefusal(std::string_view message);

} // namespace daxprobe
