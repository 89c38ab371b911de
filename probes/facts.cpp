#include "probes/facts.h"

namespace daxprobe
{

const BlockDevFacts *Facts::blockdevByNumber(unsigned major, unsigned minor) const
{
    for (const auto &b : blockdevs)
        if (b.major == major && b.minor == minor)
            return &b;
    return nullptr;
}

namespace
{

nlohmann::json statxJson(const StatxEvidence &s)
{
    nlohmann::json j = {{"ran", s.ran},
                        {"file", s.file},
                        {"dax", s.dax},
                        {"dax_known", s.daxKnown},
                        {"error", s.error}};
    if (s.rawKnown) {
        j["attributes"] = s.attributes;
        j["attributes_mask"] = s.attributesMask;
    }
    return j;
}

StatxEvidence statxFrom(const nlohmann::json &j)
{
    StatxEvidence s;
    s.ran = j.value("ran", false);
    s.file = j.value("file", "");
    s.dax = j.value("dax", false);
    s.daxKnown = j.value("dax_known", false);
    s.error = j.value("error", "");
    // A capture with the raw words replays through the same decoding as a live run.
    if (j.contains("attributes") && j.contains("attributes_mask"))
        decodeStatxAttributes(s, j["attributes"].get<std::uint64_t>(),
                              j["attributes_mask"].get<std::uint64_t>());
    return s;
}

nlohmann::json mapSyncJson(const MapSyncEvidence &m)
{
    return {{"ran", m.ran},
            {"skipped", m.skipped},
            {"ok", m.ok},
            {"error", m.error},
            {"is_pmem", m.isPmem}};
}

MapSyncEvidence mapSyncFrom(const nlohmann::json &j)
{
    MapSyncEvidence m;
    m.ran = j.value("ran", false);
    m.skipped = j.value("skipped", "");
    m.ok = j.value("ok", false);
    m.error = j.value("error", "");
    m.isPmem = j.value("is_pmem", false);
    return m;
}

nlohmann::json residencyJson(const Residency &r)
{
    return {
        {"method", r.method},          {"reason", r.reason},  {"resident_bytes", r.residentBytes},
        {"dirty_bytes", r.dirtyBytes}, {"size", r.sizeBytes}, {"ok", r.ok}};
}

Residency residencyFrom(const nlohmann::json &j)
{
    Residency r;
    r.method = j.value("method", "");
    r.reason = j.value("reason", "");
    r.residentBytes = j.value("resident_bytes", std::uint64_t{0});
    r.dirtyBytes = j.value("dirty_bytes", std::uint64_t{0});
    r.sizeBytes = j.value("size", std::uint64_t{0});
    r.ok = j.value("ok", false);
    return r;
}

} // namespace

nlohmann::json liveFactsToJson(const Facts &facts)
{
    nlohmann::json j;
    j["topology"] = facts.topology;
    j["mounts"] = nlohmann::json::object();
    for (const auto &[mp, live] : facts.mountLive)
        j["mounts"][mp] = {{"statx", statxJson(live.statx)},
                           {"map_sync", mapSyncJson(live.mapSync)}};
    j["files"] = nlohmann::json::array();
    for (const auto &f : facts.files)
        j["files"].push_back({{"path", f.path},
                              {"statx", statxJson(f.statx)},
                              {"residency", residencyJson(f.residency)}});
    j["perf"] = {{"usable", facts.faults.perf.usable}, {"reason", facts.faults.perf.reason}};
    return j;
}

void liveFactsFromJson(const nlohmann::json &j, Facts &facts)
{
    if (!j.is_object())
        return;
    if (auto it = j.find("topology"); it != j.end() && it->is_object())
        facts.topology = it->get<Topology>();
    if (auto it = j.find("mounts"); it != j.end() && it->is_object())
        for (const auto &[mp, v] : it->items())
            if (v.is_object())
                facts.mountLive[mp] = {statxFrom(v.value("statx", nlohmann::json::object())),
                                       mapSyncFrom(v.value("map_sync", nlohmann::json::object()))};
    if (auto it = j.find("files"); it != j.end() && it->is_array())
        for (const auto &f : *it)
            if (f.is_object())
                facts.files.push_back(
                    {f.value("path", ""), statxFrom(f.value("statx", nlohmann::json::object())),
                     residencyFrom(f.value("residency", nlohmann::json::object()))});
    if (auto it = j.find("perf"); it != j.end() && it->is_object()) {
        facts.faults.perf.usable = it->value("usable", false);
        facts.faults.perf.reason = it->value("reason", "");
    }
}

} // namespace daxprobe
