#include "probes/readers/file_walk.h"

#include <cerrno>
#include <cstring>
#include <deque>
#include <dirent.h>
#include <fcntl.h>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "base/beneath.h"
#include "base/unique_fd.h"

namespace daxprobe
{

namespace
{

class Walk
{
  public:
    Walk(const FileWalkLimits &limits, const FileVisitor &visit, const ExtraBound &extraBound,
         const FileSelector &select)
        : limits_(limits), visit_(visit), extraBound_(extraBound), select_(select),
          deadline_(std::chrono::steady_clock::now() + limits.maxTime)
    {
    }

    FileWalkOutcome run(int rootFd, dev_t device);

  private:
    void walkDir(int dirFd, const std::string &rel, std::deque<std::string> &dirs);
    bool bounded();
    bool meet(); // counts a regular file met; whether to visit it

    FileWalkLimits limits_;
    const FileVisitor &visit_;
    const ExtraBound &extraBound_;
    const FileSelector &select_;
    std::chrono::steady_clock::time_point deadline_;
    FileWalkOutcome out_;
    dev_t device_ = 0;
    std::set<ino_t> linked_; // files with more than one name: visited once
};

bool Walk::bounded()
{
    if (!out_.stoppedEarly.empty())
        return true;
    if (out_.files >= limits_.maxFiles)
        out_.stoppedEarly = fmt::format("stopped after {} files", out_.files);
    else if (std::chrono::steady_clock::now() >= deadline_)
        out_.stoppedEarly =
            fmt::format("stopped after {} ms ({} files)", limits_.maxTime.count(), out_.files);
    else if (extraBound_)
        out_.stoppedEarly = extraBound_();
    return !out_.stoppedEarly.empty();
}

bool Walk::meet()
{
    std::uint64_t index = out_.seen++;
    return !select_ || select_(index);
}

FileWalkOutcome Walk::run(int rootFd, dev_t device)
{
    device_ = device;
    std::deque<std::string> dirs{"."};
    while (!dirs.empty() && !bounded()) {
        std::string rel = std::move(dirs.front());
        dirs.pop_front();
        auto fd = openBeneath(rootFd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK);
        struct stat st {
        };
        if (!fd || ::fstat(fd->get(), &st) != 0 || st.st_dev != device_)
            continue; // gone, swapped for a link, or another mount now
        walkDir(fd->release(), rel, dirs);
    }
    return std::move(out_);
}

// Takes `dirFd`. Regular files are visited now, directories queued.
void Walk::walkDir(int dirFd, const std::string &rel, std::deque<std::string> &dirs)
{
    DIR *d = ::fdopendir(dirFd);
    if (!d) {
        ::close(dirFd);
        return;
    }
    while (dirent *e = ::readdir(d)) {
        std::string name = e->d_name;
        if (name == "." || name == ".." || bounded())
            continue;
        // A file readdir says is regular and that is not selected costs no
        // stat: a sampled walk of a large tree is mostly readdir.
        bool typed = e->d_type == DT_REG;
        if (typed && !meet())
            continue;
        std::string child = rel == "." ? name : rel + "/" + name;
        struct stat st {
        };
        if (::fstatat(dirFd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_dev != device_)
            continue;
        if (S_ISDIR(st.st_mode)) {
            dirs.push_back(std::move(child));
        } else if (S_ISREG(st.st_mode)) {
            if (!typed && !meet())
                continue;
            if (st.st_nlink > 1 && !linked_.insert(st.st_ino).second)
                continue;
            UniqueFD fd(::openat(dirFd, e->d_name,
                                 O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
            struct stat now {
            };
            // Only the file stat'ed above: a FIFO or device swapped in is not read.
            if (fd && ::fstat(fd.get(), &now) == 0 && S_ISREG(now.st_mode) &&
                now.st_ino == st.st_ino && now.st_dev == device_) {
                ++out_.files;
                visit_(fd.get(), child);
            }
        }
    }
    ::closedir(d);
}

} // namespace

Result<FileWalkOutcome> walkRegularFiles(const std::string &mountPoint, dev_t device,
                                         const std::string &deviceName,
                                         const FileWalkLimits &limits, const FileVisitor &visit,
                                         const ExtraBound &extraBound, const FileSelector &select)
{
    UniqueFD root(
        ::open(mountPoint.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    struct stat st {
    };
    if (!root || ::fstat(root.get(), &st) != 0)
        return fail(fmt::format("cannot open {}: {}", mountPoint, std::strerror(errno)));
    if (st.st_dev != device)
        return fail(fmt::format("{} is not on {} any more", mountPoint, deviceName));
    return Walk(limits, visit, extraBound, select).run(root.get(), st.st_dev);
}

std::string pathInMount(const std::string &mountPoint, const std::string &relPath)
{
    return mountPoint == "/" ? "/" + relPath : mountPoint + "/" + relPath;
}

} // namespace daxprobe
