#include "probes/capture/live_facts.h"

#include "probes/capture/badblock_json.h"
#include "probes/capture/census_json.h"
#include "probes/capture/topology_json.h"

namespace daxprobe
{

namespace
{

// Captures keep the fields older agents wrote, so captures of either age
// replay: each evidence's state maps to them here and nowhere else. A skip or
// a failure always has its text, which keeps the mapping one to one.
bool ran(const EvidenceOutcome &e)
{
    return e.state == EvidenceState::Failed || e.state == EvidenceState::Observed;
}

// statx: "ran" and "error" (the skip's reason when it did not run).
nlohmann::json statxJson(const StatxEvidence &s)
{
    nlohmann::json j = {{"ran", ran(s)},
                        {"file", s.file},
                        {"dax", s.dax},
                        {"dax_known", s.daxKnown},
                        {"error", s.observed() ? std::string() : s.text}};
    if (s.rawKnown) {
        j["attributes"] = s.attributes;
        j["attributes_mask"] = s.attributesMask;
    }
    return j;
}

StatxEvidence statxFrom(const nlohmann::json &j)
{
    StatxEvidence s;
    std::string error = j.value("error", "");
    if (!j.value("ran", false)) {
        if (!error.empty())
            s.skip(std::move(error));
    } else if (error.empty()) {
        s.observe();
    } else {
        s.fail(std::move(error));
    }
    s.file = j.value("file", "");
    s.dax = j.value("dax", false);
    s.daxKnown = j.value("dax_known", false);
    // A capture with the raw words replays through the same decoding as a live run.
    if (j.contains("attributes") && j.contains("attributes_mask"))
        decodeStatxAttributes(s, j["attributes"].get<std::uint64_t>(),
                              j["attributes_mask"].get<std::uint64_t>());
    return s;
}

// MAP_SYNC: "ran" (observed), "skipped" (the skip's reason), "ok" (mapped)
// and "error" (the refusal's errno text).
nlohmann::json mapSyncJson(const MapSyncEvidence &m)
{
    nlohmann::json j = {{"ran", ran(m)},
                        {"skipped", m.state == EvidenceState::Skipped ? m.text : std::string()},
                        {"ok", m.mapped},
                        {"error", ran(m) ? m.text : std::string()}};
    // Only when libpmem answered: a capture's is_pmem is its answer.
    if (m.isPmem)
        j["is_pmem"] = *m.isPmem;
    return j;
}

MapSyncEvidence mapSyncFrom(const nlohmann::json &j)
{
    MapSyncEvidence m;
    if (j.value("ran", false))
        m.observe(j.value("error", ""));
    else if (std::string skipped = j.value("skipped", ""); !skipped.empty())
        m.skip(std::move(skipped));
    m.mapped = j.value("ok", false);
    if (auto it = j.find("is_pmem"); it != j.end() && it->is_boolean())
        m.isPmem = it->get<bool>();
    return m;
}

// Residency: "ok" (observed) and "reason" (the error, or why not applicable).
nlohmann::json residencyJson(const Residency &r)
{
    return {
        {"method", r.method},          {"reason", r.text},    {"resident_bytes", r.residentBytes},
        {"dirty_bytes", r.dirtyBytes}, {"size", r.sizeBytes}, {"ok", r.observed()}};
}

Residency residencyFrom(const nlohmann::json &j)
{
    Residency r;
    std::string reason = j.value("reason", "");
    if (j.value("ok", false))
        r.observe(std::move(reason));
    else if (!reason.empty())
        r.fail(std::move(reason));
    r.method = j.value("method", "");
    r.residentBytes = j.value("resident_bytes", std::uint64_t{0});
    r.dirtyBytes = j.value("dirty_bytes", std::uint64_t{0});
    r.sizeBytes = j.value("size", std::uint64_t{0});
    return r;
}

} // namespace

nlohmann::json liveFactsToJson(const Facts &facts)
{
    nlohmann::json j;
    j["topology"] = facts.topology;
    j["mounts"] = nlohmann::json::object();
    for (const auto &[mp, live] : facts.mountLive) {
        j["mounts"][mp] = {{"statx", statxJson(live.statx)},
                           {"map_sync", mapSyncJson(live.mapSync)}};
        if (live.census.state != EvidenceState::NotRun)
            j["mounts"][mp]["census"] = daxCensusToJson(live.census);
    }
    j["files"] = nlohmann::json::array();
    for (const auto &f : facts.files)
        j["files"].push_back({{"path", f.path},
                              {"statx", statxJson(f.statx)},
                              {"residency", residencyJson(f.residency)}});
    j["badblocks"] = nlohmann::json::object();
    for (const auto &[mp, scan] : facts.badblockScans)
        j["badblocks"][mp] = badblockScanToJson(scan);
    // perf: "usable" (observed) and "reason" (why not).
    j["perf"] = {{"usable", facts.faults.perf.observed()}, {"reason", facts.faults.perf.text}};
    // The agent's remembered unsafe-shutdown counts: the judge compares with them.
    j["shutdowns_seen"] = facts.shutdownsSeen;
    j["missing_libraries"] = nlohmann::json::array();
    for (const auto &l : facts.missingLibraries)
        j["missing_libraries"].push_back(
            {{"soname", l.soname}, {"error", l.error}, {"leaves_unknown", l.unknown}});
    return j;
}

void liveFactsFromJson(const nlohmann::json &j, Facts &facts)
{
    if (!j.is_object())
        return;
    if (auto it = j.find("topology"); it != j.end() && it->is_object())
        facts.topology = it->get<Topology>();
    if (auto it = j.find("missing_libraries"); it != j.end() && it->is_array())
        for (const auto &l : *it)
            if (l.is_object())
                facts.missingLibraries.push_back(
                    {l.value("soname", ""), l.value("error", ""), l.value("leaves_unknown", "")});
    if (auto it = j.find("shutdowns_seen"); it != j.end() && it->is_object())
        for (const auto &[key, count] : it->items())
            if (count.is_number_unsigned())
                facts.shutdownsSeen[key] = count.get<std::uint64_t>();
    if (auto it = j.find("mounts"); it != j.end() && it->is_object())
        for (const auto &[mp, v] : it->items())
            if (v.is_object()) {
                MountLiveFacts &live = facts.mountLive[mp];
                live.statx = statxFrom(v.value("statx", nlohmann::json::object()));
                live.mapSync = mapSyncFrom(v.value("map_sync", nlohmann::json::object()));
                if (auto c = v.find("census"); c != v.end() && c->is_object())
                    live.census = daxCensusFromJson(*c);
            }
    if (auto it = j.find("files"); it != j.end() && it->is_array())
        for (const auto &f : *it)
            if (f.is_object())
                facts.files.push_back(
                    {f.value("path", ""), statxFrom(f.value("statx", nlohmann::json::object())),
                     residencyFrom(f.value("residency", nlohmann::json::object()))});
    if (auto it = j.find("badblocks"); it != j.end() && it->is_object())
        for (const auto &[mp, v] : it->items())
            if (v.is_object())
                facts.badblockScans[mp] = badblockScanFromJson(v);
    if (auto it = j.find("perf"); it != j.end() && it->is_object()) {
        std::string reason = it->value("reason", "");
        if (it->value("usable", false))
            facts.faults.perf.observe();
        else if (!reason.empty())
            facts.faults.perf.fail(std::move(reason));
    }
}

} // namespace daxprobe
