#include "probes/capture/topology_json.h"

#include <type_traits>

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

template <typename T>
void getOptional(const nlohmann::json &j, const char *key, std::optional<T> &out)
{
    auto it = j.find(key);
    if (it == j.end())
        return;
    if constexpr (std::is_same_v<T, bool>) {
        if (it->is_boolean())
            out = it->get<bool>();
    } else if constexpr (std::is_signed_v<T>) {
        if (it->is_number_integer())
            out = it->get<T>();
    } else if (it->is_number_unsigned()) {
        out = it->get<T>();
    }
}

} // namespace

void to_json(nlohmann::json &j, const NdBus &b)
{
    j = {{"dev", b.dev}, {"provider", b.provider}};
    putString(j, "commands", b.commands);
}

void from_json(const nlohmann::json &j, NdBus &b)
{
    b.dev = getString(j, "dev");
    b.provider = getString(j, "provider");
    b.commands = getString(j, "commands");
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
    if (n.rawSize)
        j["raw_size"] = *n.rawSize;
    putString(j, "region", n.region);
    putString(j, "map", n.map);
    if (n.align)
        j["align"] = n.align;
    if (n.sectorSize)
        j["sector_size"] = n.sectorSize;
    putString(j, "uuid", n.uuid);
    putString(j, "blockdev", n.blockdev);
    putString(j, "chardev", n.chardev);
    if (n.dataStart)
        j["data_start"] = *n.dataStart;
    j["bad_ranges"] = nlohmann::json::array();
    for (const auto &r : n.badRanges)
        j["bad_ranges"].push_back({{"sector", r.sector}, {"count", r.count}});
}

void from_json(const nlohmann::json &j, NdNamespace &n)
{
    n.dev = getString(j, "dev");
    n.region = getString(j, "region");
    n.mode = getString(j, "mode");
    n.map = getString(j, "map");
    n.size = getU64(j, "size");
    if (auto it = j.find("raw_size"); it != j.end() && it->is_number_unsigned())
        n.rawSize = it->get<std::uint64_t>();
    n.align = getU64(j, "align");
    n.sectorSize = getU64(j, "sector_size");
    n.uuid = getString(j, "uuid");
    n.blockdev = getString(j, "blockdev");
    n.chardev = getString(j, "chardev");
    getOptional(j, "data_start", n.dataStart);
    n.badblockCount = getU64(j, "badblock_count");
    if (auto it = j.find("bad_ranges"); it != j.end() && it->is_array())
        for (const auto &r : *it)
            n.badRanges.push_back({getU64(r, "sector"), getU64(r, "count")});
}

// daxctl list's names; its memory block fields only where daxctl shows them.
void to_json(nlohmann::json &j, const DaxDevice &d)
{
    j = {{"chardev", d.chardev}, {"size", d.size}};
    putString(j, "namespace", d.nsDev);
    if (d.targetNode)
        j["target_node"] = *d.targetNode;
    if (d.align)
        j["align"] = d.align;
    putString(j, "mode", d.mode);
    putString(j, "state", d.state);
    if (d.onlineMemblocks)
        j["online_memblocks"] = *d.onlineMemblocks;
    if (d.totalMemblocks)
        j["total_memblocks"] = *d.totalMemblocks;
    if (d.movable)
        j["movable"] = *d.movable;
}

void from_json(const nlohmann::json &j, DaxDevice &d)
{
    d.chardev = getString(j, "chardev");
    d.nsDev = getString(j, "namespace");
    d.size = getU64(j, "size");
    d.align = getU64(j, "align");
    getOptional(j, "target_node", d.targetNode);
    d.mode = getString(j, "mode");
    d.state = getString(j, "state");
    getOptional(j, "online_memblocks", d.onlineMemblocks);
    getOptional(j, "total_memblocks", d.totalMemblocks);
    getOptional(j, "movable", d.movable);
}

void to_json(nlohmann::json &j, const DimmRegion &r)
{
    j = {{"region", r.region}, {"read_only", r.readOnly}};
}

void from_json(const nlohmann::json &j, DimmRegion &r)
{
    r.region = getString(j, "region");
    r.readOnly = j.value("read_only", false);
}

namespace
{

// The SMART health as ndctl names its fields, and the evidence state.
constexpr const char *kHealthStates[] = {"not_run", "skipped", "failed", "observed"};

nlohmann::json healthJson(const DimmHealth &h)
{
    nlohmann::json j = {{"state", kHealthStates[static_cast<int>(h.state)]}};
    putString(j, "text", h.text);
    if (h.healthState)
        j["health_state"] = *h.healthState;
    if (h.lifeUsedPercent)
        j["life_used_percentage"] = *h.lifeUsedPercent;
    if (h.mediaTemperature)
        j["temperature_celsius"] = *h.mediaTemperature;
    if (h.controllerTemperature)
        j["controller_temperature_celsius"] = *h.controllerTemperature;
    if (h.shutdownDirty)
        j["shutdown_state"] = *h.shutdownDirty ? "dirty" : "clean";
    if (h.shutdownCount)
        j["shutdown_count"] = *h.shutdownCount;
    return j;
}

std::optional<double> getDouble(const nlohmann::json &j, const char *key)
{
    auto it = j.find(key);
    if (it == j.end() || !it->is_number())
        return std::nullopt;
    return it->get<double>();
}

DimmHealth healthFrom(const nlohmann::json &j)
{
    DimmHealth h;
    const std::string state = getString(j, "state"), text = getString(j, "text");
    if (state == "observed")
        h.observe(text);
    else if (state == "skipped")
        h.skip(text);
    else if (state == "failed")
        h.fail(text);
    if (std::string hs = getString(j, "health_state"); !hs.empty())
        h.healthState = hs;
    getOptional(j, "life_used_percentage", h.lifeUsedPercent);
    h.mediaTemperature = getDouble(j, "temperature_celsius");
    h.controllerTemperature = getDouble(j, "controller_temperature_celsius");
    if (std::string ss = getString(j, "shutdown_state"); ss == "dirty" || ss == "clean")
        h.shutdownDirty = ss == "dirty";
    getOptional(j, "shutdown_count", h.shutdownCount);
    return h;
}

} // namespace

void to_json(nlohmann::json &j, const NdDimm &d)
{
    j = {{"dev", d.dev}, {"bus", d.bus}, {"flags", d.flags}, {"regions", d.regions}};
    putString(j, "id", d.id);
    if (d.handle)
        j["handle"] = *d.handle;
    if (d.dirtyShutdown)
        j["dirty_shutdown"] = *d.dirtyShutdown;
    j["health"] = healthJson(d.health);
}

void from_json(const nlohmann::json &j, NdDimm &d)
{
    d.dev = getString(j, "dev");
    d.bus = getString(j, "bus");
    d.id = getString(j, "id");
    getOptional(j, "handle", d.handle);
    getOptional(j, "dirty_shutdown", d.dirtyShutdown);
    if (auto it = j.find("health"); it != j.end() && it->is_object())
        d.health = healthFrom(*it);
    if (auto it = j.find("flags"); it != j.end() && it->is_array())
        for (const auto &f : *it)
            if (f.is_string())
                d.flags.push_back(f.get<std::string>());
    if (auto it = j.find("regions"); it != j.end() && it->is_array())
        for (const auto &r : *it)
            if (r.is_object())
                d.regions.push_back(r.get<DimmRegion>());
}

void to_json(nlohmann::json &j, const Topology &t)
{
    j = {{"available", t.observed()},   {"buses", t.buses},
         {"regions", t.regions},        {"namespaces", t.namespaces},
         {"dax_devices", t.daxDevices}, {"dimms", t.dimms}};
    if (t.failed())
        putString(j, "error", t.text);
}

void from_json(const nlohmann::json &j, Topology &t)
{
    if (j.value("available", false))
        t.observe();
    else if (std::string error = getString(j, "error"); !error.empty())
        t.fail(std::move(error));
    if (auto it = j.find("buses"); it != j.end() && it->is_array())
        t.buses = it->get<std::vector<NdBus>>();
    if (auto it = j.find("regions"); it != j.end() && it->is_array())
        t.regions = it->get<std::vector<NdRegion>>();
    if (auto it = j.find("namespaces"); it != j.end() && it->is_array())
        t.namespaces = it->get<std::vector<NdNamespace>>();
    if (auto it = j.find("dax_devices"); it != j.end() && it->is_array())
        t.daxDevices = it->get<std::vector<DaxDevice>>();
    if (auto it = j.find("dimms"); it != j.end() && it->is_array())
        t.dimms = it->get<std::vector<NdDimm>>();
}

} // namespace daxprobe
