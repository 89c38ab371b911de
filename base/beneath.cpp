#include "base/beneath.h"

#include "base/path_components.h"
#include <atomic>
#include <cerrno>
#include <deque>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

namespace daxprobe
{

namespace
{

// Linux follows at most 40 symlinks in one lookup; so do we.
constexpr int kMaxSymlinks = 40;

std::atomic<bool> openat2Missing{false};

Result<UniqueFD> viaOpenat2(int dirfd, const std::string &rel, int flags)
{
    open_how how{};
    how.flags = static_cast<unsigned long long>(flags | O_CLOEXEC);
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    for (;;) {
        long fd = ::syscall(SYS_openat2, dirfd, rel.c_str(), &how, sizeof(how));
        if (fd >= 0)
            return UniqueFD(static_cast<int>(fd));
        // EAGAIN: a concurrent rename raced the lookup; the kernel asks for a retry.
        if (errno == EINTR || errno == EAGAIN)
            continue;
        if (errno == EXDEV)
            return failf(EXDEV, "open {}: leads outside the root", rel);
        return failf(errno, "open {}", rel);
    }
}

// The fallback: every component opened O_PATH|O_NOFOLLOW from the directory
// fd before it, symlinks read and resolved by hand, ".." only within what we
// have walked down. No path string is ever handed to the kernel whole, so a
// concurrent rename cannot swap an escape in between check and use.
Result<UniqueFD> viaWalk(int dirfd, const std::string &rel, int flags)
{
    std::deque<std::string> todo;
    pushComponentsFront(todo, rel); // todo is empty: front is the end
    if (!rel.empty() && rel.front() == '/')
        return failf(EXDEV, "open {}: absolute path below a root", rel);
    std::vector<UniqueFD> stack; // directories below dirfd, innermost last
    auto cur = [&] { return stack.empty() ? dirfd : stack.back().get(); };
    int links = 0;
    while (!todo.empty()) {
        std::string name = std::move(todo.front());
        todo.pop_front();
        if (name == ".")
            continue;
        if (name == "..") {
            if (stack.empty())
                return failf(EXDEV, "open {}: leads outside the root", rel);
            stack.pop_back();
            continue;
        }
        UniqueFD step(::openat(cur(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
        if (!step)
            return failf(errno, "open {}", rel);
        struct stat st {
        };
        if (::fstat(step.get(), &st) != 0)
            return failf(errno, "stat {}", rel);
        if (S_ISLNK(st.st_mode)) {
            if (++links > kMaxSymlinks)
                return failf(ELOOP, "open {}", rel);
            char buf[4096];
            ssize_t n = ::readlinkat(step.get(), "", buf, sizeof(buf) - 1);
            if (n < 0)
                return failf(errno, "readlink {}", rel);
            std::string_view target(buf, static_cast<std::size_t>(n));
            if (target.empty() || target.front() == '/')
                return failf(EXDEV, "open {}: leads outside the root", rel);
            pushComponentsFront(todo, target);
            continue;
        }
        if (!todo.empty()) {
            if (!S_ISDIR(st.st_mode))
                return failf(ENOTDIR, "open {}", rel);
            stack.push_back(std::move(step));
            continue;
        }
        if (flags & O_PATH) {
            if ((flags & O_DIRECTORY) && !S_ISDIR(st.st_mode))
                return failf(ENOTDIR, "open {}", rel);
            return step;
        }
        UniqueFD file(::openat(cur(), name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC));
        if (!file)
            return failf(errno, "open {}", rel);
        struct stat again {
        };
        if (::fstat(file.get(), &again) != 0)
            return failf(errno, "stat {}", rel);
        if (again.st_dev != st.st_dev || again.st_ino != st.st_ino)
            return failf(EAGAIN, "open {}: replaced while it was being opened", rel);
        return file;
    }
    // The path named the directory itself ("", ".", "a/..").
    UniqueFD self(::openat(cur(), ".", flags | O_CLOEXEC));
    if (!self)
        return failf(errno, "open {}", rel);
    return self;
}

} // namespace

Result<UniqueFD> openBeneath(int dirfd, std::string_view relView, int flags, ResolveMode mode)
{
    std::string rel(relView);
    if (mode == ResolveMode::Walk)
        return viaWalk(dirfd, rel, flags);
    if (mode == ResolveMode::Auto && openat2Missing.load(std::memory_order_relaxed))
        return viaWalk(dirfd, rel, flags);
    auto fd = viaOpenat2(dirfd, rel, flags);
    // ENOSYS: a kernel before 5.6; EPERM: a container's seccomp filter.
    if (!fd && mode == ResolveMode::Auto &&
        (fd.error().code == ENOSYS || fd.error().code == EPERM)) {
        if (fd.error().code == ENOSYS)
            openat2Missing.store(true, std::memory_order_relaxed);
        return viaWalk(dirfd, rel, flags);
    }
    return fd;
}

} // namespace daxprobe
