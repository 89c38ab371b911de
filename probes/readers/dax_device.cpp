#include "probes/readers/dax_device.h"

#include <charconv>

#include "probes/readers/text_util.h"

namespace daxprobe
{

namespace
{

const std::string kMemory = "sys/devices/system/memory";

// The driver is read through the driver's own directory (sys/bus/dax/drivers/
// NAME/daxN.M): an attribute read there is what a capture records, where a
// `driver` symlink would not be.
bool boundTo(const Root &root, const std::string &driver, const std::string &chardev)
{
    return root.readAttr("sys/bus/dax/drivers/" + driver + "/" + chardev + "/size").has_value();
}

std::optional<std::uint64_t> hexAttr(const Root &root, const std::string &path)
{
    auto v = root.readAttr(path);
    return v ? parseHex(*v) : std::nullopt;
}

// libdaxctl's memory block walk: every memoryN whose first byte lies in the
// device's range counts; "online" ones count as online, and the device is
// movable when every online block is in ZONE_MOVABLE (valid_zones "Movable").
void readMemoryBlocks(const Root &root, std::uint64_t start, DaxDevice &d)
{
    auto blockSize = hexAttr(root, kMemory + "/block_size_bytes");
    auto entries = root.listDir(kMemory);
    if (!blockSize || *blockSize == 0 || !entries)
        return;
    std::uint64_t total = 0, online = 0, movable = 0;
    for (const auto &e : *entries) {
        if (e.rfind("memory", 0) != 0)
            continue;
        auto index = hexAttr(root, kMemory + "/" + e + "/phys_index");
        if (!index)
            continue;
        std::uint64_t first = *index * *blockSize;
        if (first < start || first - start >= d.size)
            continue;
        ++total;
        if (root.readAttr(kMemory + "/" + e + "/state").value_or("") != "online")
            continue;
        ++online;
        movable += root.readAttr(kMemory + "/" + e + "/valid_zones").value_or("") == "Movable";
    }
    d.totalMemblocks = total;
    d.onlineMemblocks = online;
    if (online > 0)
        d.movable = movable == online;
}

} // namespace

std::optional<std::uint64_t> parseHex(std::string_view s)
{
    s = trim(s);
    if (s.rfind("0x", 0) == 0)
        s.remove_prefix(2);
    std::uint64_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size())
        return std::nullopt;
    return v;
}

DaxDevice readDaxDevice(const Root &root, const std::string &devPath, const std::string &chardev)
{
    DaxDevice d;
    d.chardev = chardev;
    d.size = root.readUnsigned(devPath + "/size").value_or(0);
    d.align = root.readUnsigned(devPath + "/align").value_or(0);
    if (auto node = root.readAttr(devPath + "/target_node"))
        if (auto n = parseI64(*node))
            d.targetNode = static_cast<int>(*n);
    if (boundTo(root, "kmem", chardev)) {
        d.mode = "system-ram";
        if (auto start = hexAttr(root, devPath + "/resource"))
            readMemoryBlocks(root, *start, d);
    } else if (boundTo(root, "device_dax", chardev)) {
        d.mode = "devdax";
    } else {
        d.state = "disabled";
    }
    return d;
}

} // namespace daxprobe
