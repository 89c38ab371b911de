#include "probes/readers/inode_paths.h"

#include <sys/stat.h>

namespace daxprobe
{

namespace
{

// The walk's extra bound once every inode is found: a stop, not an
// incomplete walk.
constexpr const char *kAllFound = "every inode found";

} // namespace

Result<InodePaths> findInodePaths(const std::string &mountPoint, dev_t device,
                                  const std::string &deviceName,
                                  const std::set<std::uint64_t> &inodes,
                                  const FileWalkLimits &limits)
{
    InodePaths out;
    if (inodes.empty())
        return out;
    auto walked = walkRegularFiles(
        mountPoint, device, deviceName, limits,
        [&](int fd, const std::string &rel) {
            struct stat st {
            };
            if (::fstat(fd, &st) == 0 && inodes.count(st.st_ino) && !out.paths.count(st.st_ino))
                out.paths[st.st_ino] = pathInMount(mountPoint, rel);
        },
        [&]() { return out.paths.size() == inodes.size() ? kAllFound : std::string(); });
    if (!walked)
        return tl::unexpected(walked.error());
    out.files = walked->files;
    if (walked->stoppedEarly != kAllFound)
        out.stoppedEarly = std::move(walked->stoppedEarly);
    return out;
}

} // namespace daxprobe
