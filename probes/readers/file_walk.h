#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <sys/types.h>

#include "base/result.h"

namespace daxprobe
{

// Bounds on one walk: the agent runs as root on a filesystem it does not
// own, and a check must not take minutes.
struct FileWalkLimits {
    std::uint64_t maxFiles = 100000;
    std::chrono::milliseconds maxTime{5000};
};

// How a walk ended: the files handed to the visitor, the regular files met
// (a name each, visited or not), and which bound stopped it (empty when it
// saw every file).
struct FileWalkOutcome {
    std::uint64_t files = 0;
    std::uint64_t seen = 0;
    std::string stoppedEarly;
};

// Called with an open regular file (O_RDONLY, the one stat'ed) and its path
// relative to the mount point.
using FileVisitor = std::function<void(int fd, const std::string &relPath)>;
// A bound of the caller's own, asked after the file and time bounds: the
// reason to stop, or empty to go on.
using ExtraBound = std::function<std::string()>;
// Asked with each regular file's index among those met (walk order), before
// it is stat'ed where readdir gives the type: false passes it by unopened.
using FileSelector = std::function<bool(std::uint64_t index)>;

// Walks every regular file of the mount at `mountPoint`, which must be on
// device `device` (named `deviceName` in the error). Never follows a
// symlink, never leaves the mount (st_dev), opens nothing but regular files
// (no FIFO or device is opened), a file with several names once. The error
// says why the walk could not start.
Result<FileWalkOutcome> walkRegularFiles(const std::string &mountPoint, dev_t device,
                                         const std::string &deviceName,
                                         const FileWalkLimits &limits, const FileVisitor &visit,
                                         const ExtraBound &extraBound = {},
                                         const FileSelector &select = {});

// The walk's path joined to its mount point: an absolute path.
std::string pathInMount(const std::string &mountPoint, const std::string &relPath);

} // namespace daxprobe
