#include "base/root.h"

#include <cerrno>
#include <cstdlib>
#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>

#include "base/beneath.h"

namespace daxprobe
{

Result<Root> Root::open(const std::string &dir)
{
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return failf(errno, "open root {}", dir);
    // "/" has no outside to escape to, and live sysfs/procfs need absolute
    // links resolved as usual; every other root is confined.
    struct stat self {
    }, top{};
    bool isSlash = ::fstat(fd, &self) == 0 && ::stat("/", &top) == 0 && self.st_dev == top.st_dev &&
                   self.st_ino == top.st_ino;
    return Root(UniqueFD(fd), dir, !isSlash);
}

const char *fileKindName(unsigned mode)
{
    switch (mode & S_IFMT) {
    case S_IFREG:
        return "a regular file";
    case S_IFDIR:
        return "a directory";
    case S_IFIFO:
        return "a FIFO";
    case S_IFCHR:
        return "a character device";
    case S_IFBLK:
        return "a block device";
    case S_IFSOCK:
        return "a socket";
    case S_IFLNK:
        return "a symlink";
    default:
        return "an unknown kind of file";
    }
}

Result<UniqueFD> openRegularFile(const std::string &path, int flags)
{
    struct stat before {
    };
    if (::stat(path.c_str(), &before) != 0)
        return failf(errno, "{}", path);
    if (!S_ISREG(before.st_mode))
        return failf(0, "{} is {}, not a regular file", path, fileKindName(before.st_mode));
    UniqueFD fd(::open(path.c_str(), flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    if (!fd && errno == EPERM && (flags & O_NOATIME))
        fd.reset(::open(path.c_str(), (flags & ~O_NOATIME) | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    if (!fd)
        return failf(errno, "open {}", path);
    struct stat after {
    };
    if (::fstat(fd.get(), &after) != 0)
        return failf(errno, "stat {}", path);
    if (!S_ISREG(after.st_mode) || after.st_dev != before.st_dev || after.st_ino != before.st_ino)
        return failf(EAGAIN, "{} was replaced while it was being opened", path);
    int fl = ::fcntl(fd.get(), F_GETFL);
    if (fl >= 0)
        ::fcntl(fd.get(), F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

Result<UniqueFD> Root::openRelative(const std::string &rel, int flags) const
{
    if (confined_)
        return openBeneath(fd_.get(), rel, flags);
    UniqueFD fd(::openat(fd_.get(), rel.c_str(), flags | O_CLOEXEC));
    if (!fd)
        return failf(errno, "open {}", rel);
    return fd;
}

Result<UniqueFD> Root::openForRead(std::string_view path, unsigned kinds) const
{
    std::string rel = relative(path);
    auto allowed = [kinds](const struct stat &st) {
        return (S_ISREG(st.st_mode) && (kinds & kRegular)) ||
               (S_ISCHR(st.st_mode) && (kinds & kCharDevice));
    };
    // The type is checked on an O_PATH handle before the real open: opening a
    // device node can have side effects (a watchdog arms), and O_NONBLOCK
    // alone would not stop those.
    auto probe = openRelative(rel, O_PATH);
    if (!probe)
        return probe;
    struct stat st {
    };
    if (::fstat(probe->get(), &st) != 0)
        return failf(errno, "stat {}", rel);
    if (!allowed(st))
        return failf(0, "{} is {}, not a file to read", rel, fileKindName(st.st_mode));
    auto fd = openRelative(rel, O_RDONLY | O_NONBLOCK | O_NOCTTY);
    if (!fd)
        return fd;
    struct stat again {
    };
    if (::fstat(fd->get(), &again) != 0)
        return failf(errno, "stat {}", rel);
    if (!allowed(again) || again.st_ino != st.st_ino || again.st_dev != st.st_dev)
        return failf(0, "{} was replaced while it was being opened", rel);
    return fd;
}

Root Root::system()
{
    auto root = open("/");
    if (!root)
        std::abort(); // no "/" means no process to speak of
    return std::move(*root);
}

std::string Root::relative(std::string_view path)
{
    while (!path.empty() && path.front() == '/')
        path.remove_prefix(1);
    return path.empty() ? std::string(".") : std::string(path);
}

namespace
{

Result<UniqueFD> openSysfsFile(int dirfd, const std::string &rel)
{
    // sysfs holds only directories, regular attributes and links to
    // directories, never a device node or a FIFO: on the system's own root, a
    // file under sys/ is opened directly (O_NONBLOCK), without the O_PATH
    // probe's three system calls or a type check (a directory fails its
    // read with EISDIR). A check reads dozens of attributes, and in a TCG
    // guest every system call costs tens of microseconds.
    UniqueFD fd(::openat(dirfd, rel.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    if (!fd)
        return failf(errno, "open {}", rel);
    return fd;
}

// kernfs (sysfs) hands out at most this much per read(): an attribute's
// show() output whole (it is at most a page), a binary attribute a page at a
// time. A read that returns less has reached the end, and the read() that
// would say so is saved.
constexpr std::size_t kKernfsReadChunk = 4096;

bool onSysfs(int fd)
{
    struct statfs fs {
    };
    return ::fstatfs(fd, &fs) == 0 && fs.f_type == SYSFS_MAGIC;
}

} // namespace

Result<std::string> Root::readFile(std::string_view path, std::size_t maxBytes) const
{
    std::string rel = relative(path);
    const bool sysfs = !confined_ && rel.rfind("sys/", 0) == 0;
    auto opened = sysfs ? openSysfsFile(fd_.get(), rel) : openForRead(rel);
    if (!opened)
        return tl::unexpected(opened.error());
    UniqueFD fd = std::move(*opened);
    // Only kernfs ends a file at its first short read. Other filesystems are
    // mounted under sys/ too (tracefs, debugfs, securityfs, efivarfs) and hand
    // out seq_file pages: tracing/available_events arrives ~4 KB per read.
    const bool kernfs = sysfs && onSysfs(fd.get());

    // procfs and sysfs report size 0, so read until EOF.
    std::string out;
    char buf[8192];
    for (;;) {
        ssize_t n = ::read(fd.get(), buf, sizeof(buf));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            // EAGAIN cannot come from a regular file; say so rather than loop.
            return failf(errno, "read {}", rel);
        }
        if (n == 0)
            break;
        if (out.size() + static_cast<std::size_t>(n) > maxBytes)
            return failf(EFBIG, "read {}: larger than {} bytes", rel, maxBytes);
        out.append(buf, static_cast<std::size_t>(n));
        if (kernfs && static_cast<std::size_t>(n) < kKernfsReadChunk)
            break;
    }
    noteRead(rel, out);
    return out;
}

void Root::noteRead(std::string_view path, std::string_view content) const
{
    if (recorder_)
        (*recorder_)(relative(path), content);
}

Result<std::string> Root::readAttr(std::string_view path) const
{
    auto text = readFile(path, 4096);
    if (!text)
        return text;
    while (!text->empty() && (text->back() == '\n' || text->back() == '\0'))
        text->pop_back();
    return text;
}

Result<unsigned long long> Root::readUnsigned(std::string_view path) const
{
    auto text = readAttr(path);
    if (!text)
        return tl::unexpected(text.error());
    errno = 0;
    char *end = nullptr;
    unsigned long long v = std::strtoull(text->c_str(), &end, 0);
    if (errno != 0 || end == text->c_str() || *end != '\0' || text->front() == '-')
        return failf(EINVAL, "{}: not a number: '{}'", relative(path), *text);
    return v;
}

Result<std::vector<std::string>> Root::listDir(std::string_view path) const
{
    std::string rel = relative(path);
    auto opened = openRelative(rel, O_RDONLY | O_DIRECTORY | O_NONBLOCK);
    if (!opened)
        return failf(opened.error().code, "open directory {}", rel);
    int fd = opened->release();
    DIR *dir = ::fdopendir(fd);
    if (!dir) {
        int err = errno;
        ::close(fd);
        return failf(err, "open directory {}", rel);
    }
    std::vector<std::string> names;
    while (dirent *e = ::readdir(dir)) {
        std::string_view name = e->d_name;
        if (name != "." && name != "..")
            names.emplace_back(name);
    }
    ::closedir(dir);
    std::sort(names.begin(), names.end());
    return names;
}

bool Root::exists(std::string_view path) const
{
    return openRelative(relative(path), O_PATH).has_value();
}

Result<std::string> Root::readLink(std::string_view path) const
{
    std::string rel = relative(path);
    // The link itself is not followed, but the directories leading to it are.
    auto slash = rel.rfind('/');
    std::string parent = slash == std::string::npos ? "." : rel.substr(0, slash);
    std::string name = slash == std::string::npos ? rel : rel.substr(slash + 1);
    auto dir = openRelative(parent, O_PATH | O_DIRECTORY);
    if (!dir)
        return failf(dir.error().code, "readlink {}", rel);
    char buf[4096];
    ssize_t n = ::readlinkat(dir->get(), name.c_str(), buf, sizeof(buf) - 1);
    if (n < 0)
        return failf(errno, "readlink {}", rel);
    return std::string(buf, static_cast<std::size_t>(n));
}

} // namespace daxprobe
