#include "probes/readers/media_errors.h"

#include <algorithm>

#include "probes/readers/badblocks.h"

namespace daxprobe
{

namespace
{

std::vector<BadRange> readList(const Root &root, const std::string &path)
{
    auto text = root.readFile(path, 1 << 20);
    auto ranges = text ? parseBadblocks(*text) : Result<std::vector<BadRange>>();
    return ranges ? *ranges : std::vector<BadRange>{};
}

} // namespace

std::vector<BadRange> rangesInNamespace(const std::vector<BadRange> &regionRanges,
                                        std::uint64_t dataStart, std::uint64_t size)
{
    std::vector<BadRange> out;
    const std::uint64_t first = dataStart / kSectorSize, end = first + size / kSectorSize;
    for (const auto &r : regionRanges) {
        std::uint64_t b = std::max(r.sector, first), e = std::min(r.sector + r.count, end);
        if (b < e)
            out.push_back({b - first, e - b});
    }
    return out;
}

void readMediaErrors(const Root &root, const std::string &regionPath, const std::string &claimPath,
                     NdNamespace &ns)
{
    if (!ns.blockdev.empty()) {
        ns.badRanges = readList(root, "sys/block/" + ns.blockdev + "/badblocks");
    } else if (ns.mode == "devdax") {
        auto region = root.readUnsigned(regionPath + "/resource");
        auto data = root.readUnsigned(claimPath + "/resource");
        if (region && data && *data >= *region)
            ns.badRanges = rangesInNamespace(readList(root, regionPath + "/badblocks"),
                                             *data - *region, ns.size);
    }
    ns.badblockCount = 0;
    for (const auto &r : ns.badRanges)
        ns.badblockCount += r.count;
}

} // namespace daxprobe
