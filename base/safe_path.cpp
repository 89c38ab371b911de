#include "base/safe_path.h"

#include "base/path_components.h"
#include <atomic>
#include <cerrno>
#include <deque>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace daxprobe
{

namespace
{

// Linux follows at most 40 symlinks in one lookup; so do we.
constexpr int kMaxSymlinks = 40;

std::atomic<bool> openat2Missing{false};

Result<UniqueFD> openStart(bool absolute)
{
    UniqueFD fd(::open(absolute ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!fd)
        return failf(errno, "open {}", absolute ? "/" : ".");
    return fd;
}

// The fast path: the whole of `path` in one openat2() that refuses every
// symlink. ENOSYS/EPERM (old kernel, seccomp), ELOOP (a symlink on the way,
// maybe a trusted one), EACCES (fs.protected_symlinks refused a link before
// RESOLVE_NO_SYMLINKS did) and EAGAIN (a rename raced it) all mean "walk
// instead", reported as `walk`, so the error the caller sees is the walk's.
Result<UniqueFD> openNoSymlinks(const std::string &path, int flags, ResolveMode mode, bool &walk)
{
    walk = false;
    if (mode == ResolveMode::Walk ||
        (mode == ResolveMode::Auto && openat2Missing.load(std::memory_order_relaxed))) {
        walk = true;
        return failf(ENOSYS, "openat2 not used");
    }
    open_how how{};
    how.flags = static_cast<unsigned long long>(flags | O_CLOEXEC);
    how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    long fd = ::syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof(how));
    if (fd >= 0)
        return UniqueFD(static_cast<int>(fd));
    int err = errno;
    if (err == ENOSYS)
        openat2Missing.store(true, std::memory_order_relaxed);
    walk = err == ELOOP || err == EACCES || err == EAGAIN || err == EINTR ||
           (mode == ResolveMode::Auto && (err == ENOSYS || err == EPERM));
    return failf(err, "open {}", path);
}

// The walk: every component opened O_PATH|O_NOFOLLOW from the directory fd
// before it; a symlink is read and its target walked the same way only if
// its owner is trusted. `name` comes back empty when the path ends in the
// directory itself ("/", "a/.", "a/..") and `selfOk`.
Result<ResolvedName> walk(std::string_view path, bool followLast, bool selfOk)
{
    auto cur = openStart(!path.empty() && path.front() == '/');
    if (!cur)
        return tl::unexpected(cur.error());
    std::deque<std::string> todo;
    pushComponentsFront(todo, path);
    int links = 0;
    auto self = [&]() -> Result<ResolvedName> {
        if (!selfOk)
            return failf(EINVAL, "{}: does not name a file", path);
        return ResolvedName{std::move(*cur), ""};
    };
    if (todo.empty())
        return self();
    while (!todo.empty()) {
        std::string name = std::move(todo.front());
        todo.pop_front();
        const bool last = todo.empty();
        if (name == "." || name == "..") {
            if (name == "..") {
                UniqueFD up(::openat(cur->get(), "..", O_PATH | O_DIRECTORY | O_CLOEXEC));
                if (!up)
                    return failf(errno, "open {}", path);
                *cur = std::move(up);
            }
            if (last)
                return self();
            continue;
        }
        if (last && !followLast)
            return ResolvedName{std::move(*cur), std::move(name)};
        UniqueFD step(::openat(cur->get(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
        if (!step) {
            if (last && errno == ENOENT) // a new file: its directory is all we need
                return ResolvedName{std::move(*cur), std::move(name)};
            return failf(errno, "open {}", path);
        }
        struct stat st {
        };
        if (::fstat(step.get(), &st) != 0)
            return failf(errno, "stat {}", path);
        if (S_ISLNK(st.st_mode)) {
            if (!trustedLinkOwner(st.st_uid))
                return failf(EACCES,
                             "{}: {} is a symlink of uid {}, not followed (only root's and the "
                             "caller's are)",
                             path, name, st.st_uid);
            if (++links > kMaxSymlinks)
                return failf(ELOOP, "open {}", path);
            char buf[4096];
            ssize_t n = ::readlinkat(step.get(), "", buf, sizeof(buf) - 1);
            if (n <= 0)
                return failf(n < 0 ? errno : ENOENT, "readlink {}", name);
            std::string_view target(buf, static_cast<std::size_t>(n));
            if (target.front() == '/') {
                auto root = openStart(true);
                if (!root)
                    return tl::unexpected(root.error());
                *cur = std::move(*root);
            }
            pushComponentsFront(todo, target);
            if (todo.empty()) // the target was "/" itself
                return self();
            continue;
        }
        if (last)
            return ResolvedName{std::move(*cur), std::move(name)};
        if (!S_ISDIR(st.st_mode))
            return failf(ENOTDIR, "open {}", path);
        *cur = std::move(step);
    }
    return self(); // not reached: the loop returns on its last component
}

} // namespace

bool trustedLinkOwner(uid_t owner)
{
    return owner == 0 || owner == ::geteuid();
}

Result<ResolvedName> resolveTrusted(std::string_view path, bool followLast, ResolveMode mode)
{
    if (path.empty())
        return fail("empty path", ENOENT);
    if (path.back() == '/')
        return failf(EISDIR, "{}: names a directory", path);
    std::size_t slash = path.rfind('/');
    std::string name(slash == std::string_view::npos ? path : path.substr(slash + 1));
    if (name == "." || name == "..")
        return failf(EINVAL, "{}: does not name a file", path);
    std::string dir = slash == std::string_view::npos ? "."
                      : slash == 0                    ? "/"
                                                      : std::string(path.substr(0, slash));
    bool walkInstead = false;
    auto fd = openNoSymlinks(dir, O_PATH | O_DIRECTORY, mode, walkInstead);
    if (fd) {
        struct stat st {
        };
        // A last name that is a symlink needs the owner rule: walk it.
        if (!followLast || ::fstatat(fd->get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISLNK(st.st_mode))
            return ResolvedName{std::move(*fd), std::move(name)};
    } else if (!walkInstead)
        return tl::unexpected(fd.error());
    return walk(path, followLast, false);
}

Result<UniqueFD> openDirTrusted(std::string_view path, ResolveMode mode)
{
    if (path.empty())
        return fail("empty path", ENOENT);
    bool walkInstead = false;
    auto fd = openNoSymlinks(std::string(path), O_RDONLY | O_DIRECTORY, mode, walkInstead);
    if (fd || !walkInstead)
        return fd;
    auto r = walk(path, true, true);
    if (!r)
        return tl::unexpected(r.error());
    UniqueFD dir(::openat(r->dir.get(), r->name.empty() ? "." : r->name.c_str(),
                          O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dir)
        return failf(errno, "open directory {}", path);
    return dir;
}

} // namespace daxprobe
