#include "collector/backing_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <array>

#include "base/page_residency.h"
#include "base/root.h"
#include "base/statx_dax.h"

namespace daxprobe::collector
{

namespace
{

constexpr int kMaxChain = 8;
constexpr std::uint32_t kQcow2Magic = 0x514649fb; // "QFI\xfb"
constexpr std::uint32_t kMaxBackingName = 1023;   // QEMU's own bound

std::uint64_t bigEndian(const unsigned char *p, int n)
{
    std::uint64_t v = 0;
    for (int i = 0; i < n; ++i)
        v = v << 8 | p[i];
    return v;
}

// The read_ahead_kb of the block device a file is on: a disk's own queue,
// or for a partition its disk's (the directory above). None for a file on
// tmpfs or another filesystem without a block device.
void readAheadOf(BackingFile &f, unsigned major, unsigned minor)
{
    const Root root = Root::system();
    const std::string dev = "sys/dev/block/" + std::to_string(major) + ":" + std::to_string(minor);
    for (const std::string &queue : {dev + "/queue", dev + "/../queue"})
        if (auto kb = root.readUnsigned(queue + "/read_ahead_kb")) {
            f.readAheadKb = *kb;
            f.readAheadPath = "/" + queue + "/read_ahead_kb";
            return;
        }
}

void measure(BackingFile &f)
{
    if (f.path.rfind("/dev/dax", 0) == 0) {
        f.method = "not_applicable"; // devdax: no page cache in front of it
        return;
    }
    struct statx stx {
    };
    if (::statx(AT_FDCWD, f.path.c_str(), 0, STATX_BASIC_STATS, &stx) != 0) {
        f.error = Error{errno, "statx " + f.path}.describe();
        return;
    }
    f.dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
    f.ino = stx.stx_ino;
    readAheadOf(f, stx.stx_dev_major, stx.stx_dev_minor);
    Residency r = measureResidency(f.path, (stx.stx_attributes & kStatxAttrDax) != 0);
    f.sizeBytes = r.sizeBytes;
    if (!r.observed()) {
        f.error = r.text;
        return;
    }
    f.method = r.method;
    f.cachedBytes = r.residentBytes;
}

} // namespace

std::string qcow2BackingFile(const std::string &imagePath)
{
    auto fd = openRegularFile(imagePath, O_RDONLY | O_CLOEXEC);
    if (!fd)
        return {};
    std::array<unsigned char, 20> h{};
    if (::pread(fd->get(), h.data(), h.size(), 0) != static_cast<ssize_t>(h.size()) ||
        bigEndian(h.data(), 4) != kQcow2Magic)
        return {};
    std::uint64_t offset = bigEndian(h.data() + 8, 8);
    auto size = static_cast<std::uint32_t>(bigEndian(h.data() + 16, 4));
    if (offset == 0 || size == 0 || size > kMaxBackingName)
        return {};
    std::string name(size, '\0');
    if (::pread(fd->get(), name.data(), size, static_cast<off_t>(offset)) !=
        static_cast<ssize_t>(size))
        return {};
    if (name.find('\0') != std::string::npos || name.rfind("json:", 0) == 0)
        return {};
    if (name.front() != '/')
        name = imagePath.substr(0, imagePath.rfind('/') + 1) + name;
    return name;
}

void measureBackingFiles(QemuFacts &facts)
{
    std::size_t named = facts.files.size();
    for (std::size_t i = 0; i < named; ++i) {
        if (facts.files[i].format != "qcow2")
            continue;
        std::string image = facts.files[i].path;
        for (int depth = 0; depth < kMaxChain; ++depth) {
            std::string backing = qcow2BackingFile(image);
            if (backing.empty())
                break;
            bool seen = false;
            for (const auto &f : facts.files)
                seen = seen || f.path == backing;
            if (seen)
                break;
            BackingFile b;
            b.path = backing;
            b.role = "qcow2-backing";
            b.format = "qcow2";
            facts.files.push_back(b);
            image = backing;
        }
    }
    for (auto &f : facts.files)
        measure(f);
}

} // namespace daxprobe::collector
