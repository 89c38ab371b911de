#include "probes/readers/badblocks.h"

#include <algorithm>

#include "probes/readers/blockdev.h"
#include "probes/readers/text_util.h"

namespace daxprobe
{

Result<std::vector<BadRange>> parseBadblocks(std::string_view text)
{
    std::vector<BadRange> out;
    for (auto line : splitLines(text)) {
        if (trim(line).empty())
            continue;
        auto f = splitFields(line);
        auto sector = f.size() == 2 ? parseU64(f[0]) : std::nullopt;
        auto count = f.size() == 2 ? parseU64(f[1]) : std::nullopt;
        if (!sector || !count || *count == 0 || *sector + *count < *sector)
            return failf(0, "badblocks: expected \"SECTOR COUNT\", got \"{}\"", line);
        out.push_back({*sector, *count});
    }
    return out;
}

bool clearsPoison(const std::string &provider, const std::string &commands)
{
    if (provider != "ACPI.NFIT")
        return true;
    for (auto c : splitFields(commands))
        if (c == "clear_error")
            return true;
    return false;
}

namespace
{

// The bus of the namespace's region, and whether it can clear poison.
void readBus(const Topology &topology, const NdNamespace &ns, BadblockDevice &d)
{
    if (const NdBus *b = topology.busOf(ns)) {
        d.bus = b->dev;
        d.clearsPoison = clearsPoison(b->provider, b->commands);
    }
}

// The disk or partition under sys/block/<disk>, with its number and extent.
bool readDevice(const Root &root, const std::string &dir, bool partition, BadblockDevice &d)
{
    auto number = readBlockDevNumber(root, d.name);
    auto size = root.readUnsigned(dir + "/size");
    if (!number || !size)
        return false;
    std::tie(d.major, d.minor) = *number;
    d.sectors = *size;
    if (partition) {
        auto start = root.readUnsigned(dir + "/start");
        if (!start)
            return false;
        d.startSector = *start;
    }
    return true;
}

} // namespace

std::vector<BadblockDevice> readBadblockDevices(const Root &root, const Topology &topology)
{
    std::vector<BadblockDevice> out;
    for (const auto &ns : topology.namespaces) {
        if (ns.blockdev.empty() || ns.badblockCount == 0)
            continue;
        const std::string dir = "sys/block/" + ns.blockdev;
        auto text = root.readFile(dir + "/badblocks");
        auto ranges = text ? parseBadblocks(*text) : Result<std::vector<BadRange>>();
        if (!text || !ranges || ranges->empty())
            continue;
        BadblockDevice disk{ns.blockdev, ns.blockdev, 0, 0, 0, 0, *ranges};
        readBus(topology, ns, disk);
        if (readDevice(root, dir, false, disk))
            out.push_back(disk);
        auto entries = root.listDir(dir);
        for (const auto &e : entries ? *entries : std::vector<std::string>{}) {
            if (e.rfind(ns.blockdev, 0) != 0 || !root.exists(dir + "/" + e + "/partition"))
                continue;
            BadblockDevice part = disk;
            part.name = e;
            if (readDevice(root, dir + "/" + e, true, part))
                out.push_back(part);
        }
    }
    return out;
}

std::vector<BadRange> clipToPartition(const std::vector<BadRange> &ranges, std::uint64_t start,
                                      std::uint64_t sectors)
{
    std::vector<BadRange> out;
    for (const auto &r : ranges) {
        std::uint64_t b = std::max(r.sector, start),
                      e = std::min(r.sector + r.count, start + sectors);
        if (b < e)
            out.push_back({b, e - b});
    }
    return out;
}

std::vector<DeviceBadBytes> badBytesOnDevice(const BadblockDevice &dev)
{
    std::vector<DeviceBadBytes> out;
    for (const auto &r : clipToPartition(dev.ranges, dev.startSector, dev.sectors))
        out.push_back({(r.sector - dev.startSector) * kSectorSize,
                       (r.sector + r.count - dev.startSector) * kSectorSize, r.sector});
    return out;
}

BadblockScan scanOfDevice(const BadblockDevice &dev)
{
    BadblockScan scan;
    scan.disk = dev.disk;
    scan.startSector = dev.startSector;
    scan.sectors = dev.sectors;
    scan.ranges = dev.ranges;
    scan.bus = dev.bus;
    scan.clearsPoison = dev.clearsPoison;
    return scan;
}

} // namespace daxprobe
