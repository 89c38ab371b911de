#include "agent/check/report_topology.h"

#include "probes/judges/media_errors.h"

namespace daxprobe
{

namespace
{

using json = nlohmann::json;

// Empty strings become absent fields, as in ndctl's JSON.
void putString(json &j, const char *key, const std::string &v)
{
    if (!v.empty())
        j[key] = v;
}

} // namespace

json busReportJson(const NdBus &b)
{
    return {{"dev", b.dev}, {"provider", b.provider}};
}

json regionReportJson(const NdRegion &r)
{
    json j = {{"dev", r.dev},
              {"size", r.size},
              {"align", r.align},
              {"available_size", r.availableSize},
              {"badblock_count", r.badblockCount}};
    putString(j, "bus", r.bus);
    putString(j, "type", r.type);
    putString(j, "persistence_domain", r.persistenceDomain);
    if (r.numaNode)
        j["numa_node"] = *r.numaNode;
    return j;
}

json namespaceReportJson(const NdNamespace &n)
{
    json j = {
        {"dev", n.dev}, {"mode", n.mode}, {"size", n.size}, {"badblock_count", n.badblockCount}};
    j["raw_size"] = n.rawSize ? json(*n.rawSize) : json(nullptr);
    putString(j, "region", n.region);
    putString(j, "map", n.map);
    if (n.align)
        j["align"] = n.align;
    if (n.sectorSize)
        j["sector_size"] = n.sectorSize;
    putString(j, "uuid", n.uuid);
    putString(j, "blockdev", n.blockdev);
    putString(j, "chardev", n.chardev);
    // null: bad blocks counted, their places unknown (a capture from before they were read)
    j["media_errors"] = n.badRanges.empty() && n.badblockCount ? json() : json::array();
    for (const auto &b : mediaErrorBytes(n))
        j["media_errors"].push_back({{"offset", b.offset}, {"length", b.length}});
    return j;
}

// daxctl list's names; its memory block fields only where daxctl shows them.
json daxDeviceReportJson(const DaxDevice &d)
{
    json j = {{"chardev", d.chardev}, {"size", d.size}};
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
    return j;
}

// ndctl list -DH's health fields, each where the DIMM gives it; a DIMM
// without SMART is "not available", never a guess.
json dimmHealthJson(const DimmHealth &h)
{
    json j = {{"available", h.observed()}};
    j["reason"] = h.observed()                       ? json(nullptr)
                  : h.state == EvidenceState::NotRun ? json("not read: no live check")
                                                     : json(h.text);
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

json dimmReportJson(const NdDimm &d)
{
    json regions = json::array();
    for (const auto &r : d.regions)
        regions.push_back({{"region", r.region}, {"read_only", r.readOnly}});
    json j = {{"dev", d.dev}, {"bus", d.bus}, {"flags", d.flags}, {"regions", regions}};
    putString(j, "id", d.id);
    if (d.handle)
        j["handle"] = *d.handle;
    if (d.dirtyShutdown)
        j["dirty_shutdown"] = *d.dirtyShutdown;
    j["health"] = dimmHealthJson(d.health);
    return j;
}

} // namespace daxprobe
