#include "probes/readers/blockdev.h"

#include <fmt/format.h>

#include "probes/readers/text_util.h"

namespace daxprobe
{

namespace
{

// A name the kernel gave a block device: one path component.
bool plainName(std::string_view name)
{
    return !name.empty() && name.size() < 256 && name != "." && name != ".." &&
           name.find('/') == std::string_view::npos;
}

std::optional<std::string> ueventValue(std::string_view uevent, std::string_view key)
{
    for (std::string_view line : splitLines(uevent))
        if (line.size() > key.size() && line.substr(0, key.size()) == key &&
            line[key.size()] == '=')
            return std::string(line.substr(key.size() + 1));
    return std::nullopt;
}

// The disk a partition belongs to: sysfs puts a partition's directory in
// its disk's (/sys/block/pmem0/pmem0p1), and the kernel names a partition
// after its disk (pmem0p1, sda1, nvme0n1p1), so the disk is the longest
// prefix of the name that has it.
std::optional<std::string> diskOfPartition(const Root &root, const std::string &part)
{
    for (std::size_t len = part.size() - 1; len > 0; --len) {
        std::string disk = part.substr(0, len);
        if (root.readAttr(fmt::format("sys/block/{}/{}/partition", disk, part)))
            return disk;
    }
    return std::nullopt;
}

} // namespace

std::optional<bool> readQueueDax(const Root &root, const std::string &blockdev)
{
    auto v = root.readAttr("sys/class/block/" + blockdev + "/queue/dax");
    if (!v)
        return std::nullopt;
    if (*v == "1")
        return true;
    if (*v == "0")
        return false;
    return std::nullopt;
}

std::optional<std::pair<unsigned, unsigned>> readBlockDevNumber(const Root &root,
                                                                const std::string &blockdev)
{
    auto v = root.readAttr("sys/class/block/" + blockdev + "/dev");
    if (!v)
        return std::nullopt;
    auto colon = v->find(':');
    if (colon == std::string::npos)
        return std::nullopt;
    auto ma = parseU64(std::string_view(*v).substr(0, colon));
    auto mi = parseU64(std::string_view(*v).substr(colon + 1));
    if (!ma || !mi || *ma > 0xfffff || *mi > 0xfffff)
        return std::nullopt;
    return std::make_pair(static_cast<unsigned>(*ma), static_cast<unsigned>(*mi));
}

std::optional<BlockDevFacts> readDisk(const Root &root, const std::string &name)
{
    if (!plainName(name))
        return std::nullopt;
    auto number = readBlockDevNumber(root, name);
    if (!number)
        return std::nullopt;
    return BlockDevFacts{name, number->first, number->second, readQueueDax(root, name)};
}

std::optional<BlockDevFacts> readBlockDevByNumber(const Root &root, unsigned major, unsigned minor)
{
    auto uevent = root.readFile(fmt::format("sys/dev/block/{}:{}/uevent", major, minor), 4096);
    if (!uevent)
        return std::nullopt;
    auto name = ueventValue(*uevent, "DEVNAME");
    if (!name || !plainName(*name))
        return std::nullopt;
    BlockDevFacts b{*name, major, minor, std::nullopt};
    if (ueventValue(*uevent, "DEVTYPE") == "partition") {
        auto disk = diskOfPartition(root, *name);
        if (!disk) {
            b.partitionStart.reset(); // a partition whose disk sysfs does not show
            return b;
        }
        b.partitionOf = *disk;
        // "start" is in 512-byte sectors whatever the logical block size.
        auto start = root.readUnsigned(fmt::format("sys/block/{}/{}/start", *disk, *name));
        b.partitionStart =
            start && *start < (1ULL << 54) ? std::optional(*start * 512) : std::nullopt;
    }
    b.queueDax = readQueueDax(root, b.disk());
    return b;
}

} // namespace daxprobe
