#include "agent/check/shutdown_memory.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <nlohmann/json.hpp>

#include "base/root.h"
#include "base/safe_files.h"

namespace daxprobe
{

namespace
{

constexpr std::size_t kMaxFileBytes = 64 << 10;
constexpr std::size_t kMaxDimms = 1024;
constexpr const char *kNewFile = "dimm-shutdowns.json.new";

Result<UniqueFD> openStateDir(const std::string &stateDir)
{
    int fd = ::open(stateDir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return fail("state directory " + stateDir, errno);
    return UniqueFD(fd);
}

} // namespace

Result<ShutdownCounts> loadShutdownCounts(const std::string &stateDir)
{
    auto root = Root::open(stateDir);
    if (!root)
        return tl::unexpected(root.error());
    auto text = root->readFile(kShutdownMemoryFile, kMaxFileBytes);
    if (!text)
        return text.error().code == ENOENT ? Result<ShutdownCounts>(ShutdownCounts{})
                                           : tl::unexpected(text.error());
    auto j = nlohmann::json::parse(*text, nullptr, false);
    const std::string what = stateDir + "/" + kShutdownMemoryFile;
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

Result<void> saveShutdownCounts(const std::string &stateDir, const ShutdownCounts &counts)
{
    auto dir = openStateDir(stateDir);
    if (!dir)
        return tl::unexpected(dir.error());
    // A .new left by a check that died is ours: only a regular file is removed.
    struct stat st {
    };
    if (::fstatat(dir->get(), kNewFile, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
        ::unlinkat(dir->get(), kNewFile, 0);
    auto file = createExclusive(dir->get(), kNewFile, O_WRONLY, 0600);
    if (!file)
        return tl::unexpected(file.error());
    nlohmann::json j(counts);
    if (auto w = writeAll(file->fd.get(), j.dump() + "\n", kNewFile); !w)
        return w;
    if (::fsync(file->fd.get()) != 0)
        return fail(std::string("fsync ") + kNewFile, errno);
    if (::renameat(dir->get(), kNewFile, dir->get(), kShutdownMemoryFile) != 0)
        return fail(std::string("rename ") + kNewFile, errno);
    return {};
}

} // namespace daxprobe
