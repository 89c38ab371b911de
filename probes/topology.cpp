#include "probes/topology.h"

namespace daxprobe
{

namespace
{

// Empty strings become absent fields, as in ndctl's JSON.
void putString(nlohmann::json &j, const char *key, const std::string &v)
{
    if (!v.empty())
        j[key] = v;
}

std::string getString(const nlohmann::json &j, const char *key)
{
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::uint64_t getU64(const nlohmann::json &j, const char *key)
{
    auto it = j.find(key);
    return it != j.end() && it->is_number_unsigned() ? it->get<std::uint64_t>() : 0;
}

} // namespace

const NdNamespace *Topology::namespaceByBlockdev(const std::string &blockdev) const
{
    for (const auto &ns : namespaces)
        if (!ns.blockdev.empty() && ns.blockdev == blockdev)
            return &ns;
    return nullptr;
}

void to_json(nlohmann::json &j, const NdBus &b)
{
    j = {{"dev", b.dev}, {"provider", b.provider}};
}

void from_json(const nlohmann::json &j, NdBus &b)
{
    b.dev = getString(j, "dev");
    b.provider = getString(j, "provider");
}

void to_json(nlohmann::json &j, const NdRegion &r)
{
    j = {{"dev", r.dev},
         {"size", r.size},
         {"align", r.align},
         {"available_size", r.availableSize},
         {"badblock_count", r.badblockCount}};
    putString(j, "bus", r.bus);
    putString(j, "type", r.type);
    putString(j, "persistence_domain", r.persistenceDomain);
    if (r.numaNode)
        j["numa_node"] = *r.numaNode;
}

void from_json(const nlohmann::json &j, NdRegion &r)
{
    r.dev = getString(j, "dev");
    r.bus = getString(j, "bus");
    r.type = getString(j, "type");
    r.size = getU64(j, "size");
    r.align = getU64(j, "align");
    r.availableSize = getU64(j, "available_size");
    r.persistenceDomain = getString(j, "persistence_domain");
    if (auto it = j.find("numa_node"); it != j.end() && it->is_number_integer())
        r.numaNode = it->get<int>();
    r.badblockCount = getU64(j, "badblock_count");
}

void to_json(nlohmann::json &j, const NdNamespace &n)
{
    j = {{"dev", n.dev}, {"mode", n.mode}, {"size", n.size}, {"badblock_count", n.badblockCount}};
    putString(j, "region", n.region);
    putString(j, "map", n.map);
    if (n.align)
        j["align"] = n.align;
    putString(j, "uuid", n.uuid);
    putString(j, "blockdev", n.blockdev);
    putString(j, "chardev", n.chardev);
}

void from_json(const nlohmann::json &j, NdNamespace &n)
{
    n.dev = getString(j, "dev");
    n.region = getString(j, "region");
    n.mode = getString(j, "mode");
    n.map = getString(j, "map");
    n.size = getU64(j, "size");
    n.align = getU64(j, "align");
    n.uuid = getString(j, "uuid");
    n.blockdev = getString(j, "blockdev");
    n.chardev = getString(j, "chardev");
    n.badblockCount = getU64(j, "badblock_count");
}

void to_json(nlohmann::json &j, const Topology &t)
{
    j = {{"available", t.available},
         {"buses", t.buses},
         {"regions", t.regions},
         {"namespaces", t.namespaces}};
    putString(j, "error", t.error);
}

void from_json(const nlohmann::json &j, Topology &t)
{
    t.available = j.value("available", false);
    t.error = getString(j, "error");
    if (auto it = j.find("buses"); it != j.end() && it->is_array())
        t.buses = it->get<std::vector<NdBus>>();
    if (auto it = j.find("regions"); it != j.end() && it->is_array())
        t.regions = it->get<std::vector<NdRegion>>();
    if (auto it = j.find("namespaces"); it != j.end() && it->is_array())
        t.namespaces = it->get<std::vector<NdNamespace>>();
}

} // namespace daxprobe
