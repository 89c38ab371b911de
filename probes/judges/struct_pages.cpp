#include "probes/judges/struct_pages.h"

#include <fmt/format.h>

namespace daxprobe
{

namespace
{

std::string pagesMib(std::uint64_t bytes)
{
    // Whole MiB where it is one (the kernel aligns to 2 MiB), else one decimal.
    if (bytes % (1u << 20) == 0)
        return fmt::format("{} MiB", bytes >> 20);
    return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1u << 20));
}

std::uint64_t structPageBytesOf(std::uint64_t nsBytes)
{
    return nsBytes / kBasePageBytes * kStructPageBytes;
}

// A namespace sized to what it holds is the remedy either way: the struct
// pages grow with the namespace, not with the data on it.
constexpr const char *kStructPagesSizedToContent =
    "a namespace (and backing file) sized to its content: the struct pages grow with the "
    "namespace, 64 MiB per 4 GiB, not with the data on it";

StructPagesCost structPagesCostOf(const NdNamespace &ns)
{
    StructPagesCost c;
    c.ns = ns.dev;
    c.map = ns.map;
    Verdict &v = c.verdict;
    v.severity = Severity::Ok; // a cost of DAX, not a fault
    const std::string label = fmt::format("{} ({}, map={})", ns.dev, ns.mode, ns.map);
    if (ns.map == "dev") {
        c.where = "namespace";
        v.code = code::StructPagesInNamespace;
        if (ns.rawSize && *ns.rawSize >= ns.size) {
            c.bytes = *ns.rawSize - ns.size;
            c.source = "kernel";
            v.summary = fmt::format(
                "{}: {} of its {} hold its info block and struct pages (64 B per 4 KiB page: {}), "
                "in the namespace itself, not in guest RAM",
                label, pagesMib(*c.bytes), pagesMib(*ns.rawSize),
                pagesMib(structPageBytesOf(*ns.rawSize)));
            v.evidence.push_back(
                {"ndctl", fmt::format("{}: size {} (the namespace), usable {}: {} bytes given up",
                                      ns.dev, *ns.rawSize, ns.size, *c.bytes)});
        } else {
            v.summary = fmt::format(
                "{}: its struct pages (64 B per 4 KiB page) are in the namespace itself; how "
                "much is unknown: its own size was not read",
                label);
        }
        v.remedy = kStructPagesSizedToContent;
    } else {
        c.where = "guest_ram";
        v.code = code::StructPagesInRam;
        if (ns.rawSize) {
            c.bytes = structPageBytesOf(*ns.rawSize);
            c.source = "computed";
            v.summary = fmt::format(
                "{}: its struct pages take {} of guest RAM (64 B per 4 KiB page of its {}; "
                "computed: the kernel does not report them per namespace)",
                label, pagesMib(*c.bytes), pagesMib(*ns.rawSize));
            v.evidence.push_back({"ndctl", fmt::format("{}: size {} (the namespace), usable {}",
                                                       ns.dev, *ns.rawSize, ns.size)});
        } else {
            v.summary = fmt::format(
                "{}: its struct pages (64 B per 4 KiB page) are in guest RAM; how much is "
                "unknown: its own size was not read",
                label);
        }
        v.remedy = fmt::format(
            "{}; or map=dev, which keeps them out of guest RAM (`ndctl create-namespace -f -e {} "
            "-m {} -M dev`: it erases the namespace; it needs a writable backing, a read-only "
            "one takes map=mem only)",
            kStructPagesSizedToContent, ns.dev, ns.mode);
    }
    return c;
}

} // namespace

std::vector<StructPagesCost> judgeStructPages(const Topology &topology)
{
    std::vector<StructPagesCost> out;
    for (const auto &ns : topology.namespaces)
        if ((ns.mode == "fsdax" || ns.mode == "devdax") && (ns.map == "dev" || ns.map == "mem"))
            out.push_back(structPagesCostOf(ns));
    return out;
}

} // namespace daxprobe
