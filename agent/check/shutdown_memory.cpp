#include "agent/check/shutdown_memory.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <nlohmann/json.hpp>

#include "base/safe_files.h"
#include "base/safe_path.h"

namespace daxprobe
{

namespace
{

constexpr std::size_t kMaxFileBytes = 64 << 10;
constexpr std::size_t kMaxDimms = 1024;
constexpr const char *kNewFile = "dimm-shutdowns.json.new";

// At most kMaxFileBytes of a regular file, never through a symlink.
Result<std::string> readSmall(int dirfd, const char *name)
{
    UniqueFD fd(::openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!fd)
        return failf(errno, "open {}", name);
    struct stat st {
    };
    if (::fstat(fd.get(), &st) != 0)
        return failf(errno, "stat {}", name);
    if (!S_ISREG(st.st_mode) || static_cast<std::size_t>(st.st_size) > kMaxFileBytes)
        return failf(EINVAL, "{}: not a regular file of at most 64 KiB", name);
    std::string text(kMaxFileBytes + 1, '\0');
    std::size_t got = 0;
    while (got < text.size()) {
        ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return failf(errno, "read {}", name);
        if (n == 0)
            break;
        got += static_cast<std::size_t>(n);
    }
    if (got > kMaxFileBytes)
        return failf(EFBIG, "{}: grew past 64 KiB", name);
    text.resize(got);
    return text;
}

} // namespace

Result<StateDir> openStateDir(const std::string &path)
{
    auto fd = openDirTrusted(path);
    if (!fd)
        return failf(fd.error().code, "state directory {}: {}", path, fd.error().describe());
    // Counts another user could write are counts they choose (a maximal one
    // hides every later rise): the directory must be the caller's alone.
    struct stat st {
    };
    if (::fstat(fd->get(), &st) != 0)
        return failf(errno, "stat state directory {}", path);
    if (st.st_uid != ::geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))
        return failf(EACCES,
                     "state directory {}: owned by uid {} with mode {:o}; it must be the "
                     "caller's and writable by no one else",
                     path, st.st_uid, st.st_mode & 07777);
    return StateDir{std::move(*fd), path};
}

Result<ShutdownCounts> loadShutdownCounts(const StateDir &dir)
{
    auto text = readSmall(dir.fd.get(), kShutdownMemoryFile);
    if (!text)
        return text.error().code == ENOENT ? Result<ShutdownCounts>(ShutdownCounts{})
                                           : tl::unexpected(text.error());
    auto j = nlohmann::json::parse(*text, nullptr, false);
    const std::string what = dir.path + "/" + kShutdownMemoryFile;
    if (!j.is_object() || j.size() > kMaxDimms)
        return fail(what + ": not an object of at most 1024 counts");
    ShutdownCounts out;
    for (const auto &[key, count] : j.items()) {
        if (!count.is_number_unsigned())
            return fail(what + ": the count of " + key + " is not a whole number");
        out[key] = count.get<std::uint64_t>();
    }
    return out;
}

ShutdownCounts updatedShutdownCounts(ShutdownCounts seen, const std::vector<NdDimm> &dimms)
{
    for (const auto &d : dimms)
        if (d.health.shutdownCount)
            seen[dimmKey(d)] = *d.health.shutdownCount;
    return seen;
}

Result<void> saveShutdownCounts(const StateDir &stateDir, const ShutdownCounts &counts)
{
    // The fd opened for the load: a path swapped since leads nowhere new.
    const int dir = stateDir.fd.get();
    // A .new left by a check that died is ours: only a regular file is removed.
    struct stat st {
    };
    if (::fstatat(dir, kNewFile, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
        ::unlinkat(dir, kNewFile, 0);
    auto file = createExclusive(dir, kNewFile, O_WRONLY, 0600);
    if (!file)
        return tl::unexpected(file.error());
    nlohmann::json j(counts);
    if (auto w = writeAll(file->fd.get(), j.dump() + "\n", kNewFile); !w)
        return w;
    if (::fsync(file->fd.get()) != 0)
        return fail(std::string("fsync ") + kNewFile, errno);
    if (::renameat(dir, kNewFile, dir, kShutdownMemoryFile) != 0)
        return fail(std::string("rename ") + kNewFile, errno);
    return {};
}

} // namespace daxprobe
