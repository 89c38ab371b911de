#include "probes/readers/blockdev.h"

#include "probes/readers/text_util.h"

namespace daxprobe
{

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

} // namespace daxprobe
