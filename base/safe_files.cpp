#include "base/safe_files.h"

#include "base/safe_path.h"

#include <cerrno>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace daxprobe
{

namespace
{

FileId idOf(const struct stat &st)
{
    return FileId{st.st_dev, st.st_ino};
}

Result<bool> isEmptyDir(int fd)
{
    int copy = ::dup(fd);
    if (copy < 0)
        return failf(errno, "dup");
    DIR *d = ::fdopendir(copy);
    if (!d) {
        int err = errno;
        ::close(copy);
        return failf(err, "fdopendir");
    }
    bool empty = true;
    errno = 0;
    while (dirent *e = ::readdir(d)) {
        std::string_view n(e->d_name);
        if (n != "." && n != "..") {
            empty = false;
            break;
        }
    }
    int err = errno;
    ::closedir(d);
    if (empty && err != 0)
        return failf(err, "readdir");
    return empty;
}

} // namespace

Result<ParentDir> openParent(std::string_view path)
{
    auto r = resolveTrusted(path, false);
    if (!r)
        return tl::unexpected(r.error());
    return ParentDir{std::move(r->dir), std::move(r->name)};
}

Result<CreatedFile> createExclusive(int dirfd, const std::string &name, int flags, mode_t mode)
{
    UniqueFD fd(
        ::openat(dirfd, name.c_str(), flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
    if (!fd)
        return failf(errno, "create {}", name);
    struct stat st {
    };
    if (::fstat(fd.get(), &st) != 0)
        return failf(errno, "stat {}", name);
    return CreatedFile{std::move(fd), idOf(st)};
}

Result<UniqueFD> makeDirExclusive(int dirfd, const std::string &name, mode_t mode)
{
    if (::mkdirat(dirfd, name.c_str(), mode) != 0)
        return failf(errno, "mkdir {}", name);
    // Between mkdirat and openat a rename could put another directory here:
    // only an empty one of ours is taken for the one we made.
    UniqueFD fd(::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd)
        return failf(errno, "open directory {}", name);
    struct stat st {
    };
    if (::fstat(fd.get(), &st) != 0)
        return failf(errno, "stat {}", name);
    if (st.st_uid != ::geteuid())
        return failf(EACCES, "{}: replaced by a directory of uid {}", name, st.st_uid);
    auto empty = isEmptyDir(fd.get());
    if (!empty)
        return tl::unexpected(empty.error());
    if (!*empty)
        return failf(ENOTEMPTY, "{}: replaced by a directory that is not empty", name);
    return fd;
}

Result<void> removeCreated(int dirfd, const std::string &name, const FileId &id)
{
    struct stat st {
    };
    if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT)
            return failf(ENOENT, "{} is already gone", name);
        return failf(errno, "stat {}", name);
    }
    // A name the dirfd's other writers swapped between here and unlinkat
    // is still one in this directory: nothing outside it can be reached.
    if (idOf(st) != id)
        return failf(ESTALE, "{} is no longer the file created there, left alone", name);
    if (::unlinkat(dirfd, name.c_str(), 0) != 0)
        return failf(errno, "unlink {}", name);
    return {};
}

Result<UniqueFD> openForRedirect(std::string_view path)
{
    // Every directory on the way, and a last name that is a symlink, resolved
    // without following another user's link (base/safe_path.h): what is left
    // is a name that was no symlink, opened O_NOFOLLOW below.
    auto parent = resolveTrusted(path, true);
    if (!parent)
        return tl::unexpected(parent.error());
    const int dirfd = parent->dir.get();
    const char *name = parent->name.c_str();
    struct stat dirSt {
    };
    if (::fstat(dirfd, &dirSt) != 0)
        return failf(errno, "stat the directory of {}", path);
    const bool shared = (dirSt.st_mode & S_ISVTX) && (dirSt.st_mode & S_IWOTH);

    // Not truncated until the file is known, and in a shared directory no
    // wait for a FIFO's reader either.
    UniqueFD fd(::openat(dirfd, name,
                         O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | (shared ? O_NONBLOCK : 0),
                         0666));
    if (!fd) {
        if (errno == ELOOP)
            return failf(EACCES, "{}: a symlink appeared while it was opened, not followed", path);
        if (errno == ENXIO)
            return failf(ENXIO, "{}: a FIFO with no reader", path);
        return failf(errno, "open {}", path);
    }
    struct stat st {
    };
    if (::fstat(fd.get(), &st) != 0)
        return failf(errno, "stat {}", path);
    // Another name for the same file may be anyone's (a hard link made where
    // fs.protected_hardlinks is 0): writing it would write that one too.
    if (S_ISREG(st.st_mode) && st.st_nlink > 1)
        return failf(EMLINK,
                     "{}: a file with {} hard links, not written (another name may be "
                     "another user's)",
                     path, st.st_nlink);
    // The kernel's protected_regular rule for sticky world-writable
    // directories: a file owned by the caller or by the directory's owner.
    if (shared && st.st_uid != ::geteuid() && st.st_uid != dirSt.st_uid)
        return failf(EACCES,
                     "{}: a file of uid {} in a sticky world-writable directory, not written", path,
                     st.st_uid);
    if (shared) {
        int fl = ::fcntl(fd.get(), F_GETFL);
        if (fl < 0 || ::fcntl(fd.get(), F_SETFL, fl & ~O_NONBLOCK) != 0)
            return failf(errno, "fcntl {}", path);
    }
    if (S_ISREG(st.st_mode) && ::ftruncate(fd.get(), 0) != 0)
        return failf(errno, "truncate {}", path);
    return fd;
}

Result<void> writeAll(int fd, std::string_view data, std::string_view what)
{
    while (!data.empty()) {
        ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return failf(errno, "write {}", what);
        }
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    return {};
}

} // namespace daxprobe
