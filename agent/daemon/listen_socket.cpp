#include "agent/daemon/listen_socket.h"

#include <cerrno>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace daxprobe
{

namespace
{

FileId idOf(const struct stat &st)
{
    return FileId{st.st_dev, st.st_ino};
}

// PATH.lock, flock()ed. After the lock, the name must still be the inode
// locked: an agent that exited meanwhile unlinked it, and a lock on an
// unlinked inode excludes no one (so: try again with the new file).
Result<std::pair<UniqueFD, FileId>> lockBeside(const ParentDir &dir, const std::string &path)
{
    const std::string name = dir.name + ".lock";
    for (int attempt = 0; attempt < 3; ++attempt) {
        UniqueFD fd(::openat(dir.dir.get(), name.c_str(),
                             O_RDONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600));
        if (!fd)
            return failf(errno, "{}.lock", path);
        struct stat st {
        };
        if (::fstat(fd.get(), &st) != 0)
            return failf(errno, "stat {}.lock", path);
        // Another user's file there would be theirs to hold (and not ours to
        // remove at exit): refused, as is anything but a regular file.
        if (!S_ISREG(st.st_mode) || st.st_uid != ::geteuid())
            return failf(EACCES, "{}.lock: not a regular file of uid {} (uid {}), not used", path,
                         ::geteuid(), st.st_uid);
        if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
            if (errno == EWOULDBLOCK)
                return failf(EADDRINUSE, "{}: another agent holds {}.lock", path, path);
            return failf(errno, "flock {}.lock", path);
        }
        struct stat now {
        };
        if (::fstatat(dir.dir.get(), name.c_str(), &now, AT_SYMLINK_NOFOLLOW) == 0 &&
            idOf(now) == idOf(st))
            return std::pair{std::move(fd), idOf(st)};
    }
    return failf(EAGAIN, "{}.lock kept changing while it was locked", path);
}

// Is something accepting connections on the socket node at `via`?
bool answers(const sockaddr_un &addr)
{
    UniqueFD probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!probe)
        return false;
    if (::connect(probe.get(), reinterpret_cast<const sockaddr *>(&addr), sizeof(addr)) == 0)
        return true;
    // EAGAIN: its backlog is full, so someone is listening.
    return errno == EAGAIN || errno == EINPROGRESS;
}

} // namespace

Result<ListenSocket> ListenSocket::bind(const std::string &path)
{
    ListenSocket s;
    s.path_ = path;
    auto dir = openParent(path);
    if (!dir)
        return failf(dir.error().code, "socket path {}: {}", path, dir.error().message);
    s.dir_ = std::move(*dir);
    // The directory opened once, the socket bound and probed through it
    // (/proc/self/fd/N/NAME), so a parent swapped later is not followed.
    sockaddr_un addr{};
    std::string via = fmt::format("/proc/self/fd/{}/{}", s.dir_.dir.get(), s.dir_.name);
    if (via.size() >= sizeof(addr.sun_path) || ::access("/proc/self/fd", X_OK) != 0)
        via = path; // no /proc, or a long name: the path as given
    if (via.size() >= sizeof(addr.sun_path))
        return failf(ENAMETOOLONG, "socket path {}", path);
    addr.sun_family = AF_UNIX;
    via.copy(addr.sun_path, via.size());

    auto lock = lockBeside(s.dir_, path);
    if (!lock)
        return tl::unexpected(lock.error());
    s.lock_ = std::move(lock->first);
    s.lockId_ = lock->second;

    struct stat st {
    };
    if (::fstatat(s.dir_.dir.get(), s.dir_.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISSOCK(st.st_mode)) {
        if (answers(addr))
            return failf(EADDRINUSE,
                         "{}: a live socket (something accepts connections there), "
                         "left alone",
                         path);
        if (st.st_uid != ::geteuid())
            return failf(EACCES, "{}: a dead socket of uid {}, not removed", path, st.st_uid);
        // Ours and dead (an agent killed before its exit): replaced.
        ::unlinkat(s.dir_.dir.get(), s.dir_.name.c_str(), 0);
    }
    s.fd_.reset(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!s.fd_)
        return failf(errno, "socket");
    mode_t oldMask = ::umask(0177); // 0600 by the umask, not a chmod that could follow a swap
    int bound = ::bind(s.fd_.get(), reinterpret_cast<sockaddr *>(&addr), sizeof(addr));
    int bindErr = errno;
    ::umask(oldMask); // single-threaded here: no other file is being made
    if (bound < 0)
        return failf(bindErr, "bind {}", path);
    if (::fstatat(s.dir_.dir.get(), s.dir_.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
        return failf(errno, "stat {}", path);
    s.id_ = idOf(st);
    if (::listen(s.fd_.get(), 4) < 0)
        return failf(errno, "listen {}", path);
    return s;
}

ListenSocket &ListenSocket::operator=(ListenSocket &&other) noexcept
{
    if (this != &other) {
        removeOwn();
        path_ = std::move(other.path_);
        fd_ = std::move(other.fd_);
        dir_ = std::move(other.dir_);
        id_ = other.id_;
        lock_ = std::move(other.lock_);
        lockId_ = other.lockId_;
    }
    return *this;
}

ListenSocket::~ListenSocket()
{
    removeOwn();
}

void ListenSocket::removeOwn()
{
    // The socket first, then the lock file, while the lock is still held:
    // a new agent locks only after both are gone or finds the lock taken.
    if (fd_) {
        auto r = removeCreated(dir_.dir.get(), dir_.name, id_);
        if (!r && r.error().code != ENOENT)
            spdlog::warn("{}: not removed: {}", path_, r.error().describe());
        fd_.reset();
    }
    if (lock_) {
        auto r = removeCreated(dir_.dir.get(), dir_.name + ".lock", lockId_);
        if (!r && r.error().code != ENOENT)
            spdlog::warn("{}.lock: not removed: {}", path_, r.error().describe());
        lock_.reset();
    }
}

} // namespace daxprobe
