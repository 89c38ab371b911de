#include "probes/capture/badblock_json.h"

namespace daxprobe
{

nlohmann::json badblockScanToJson(const BadblockScan &scan)
{
    nlohmann::json ranges = nlohmann::json::array(), extents = nlohmann::json::array();
    for (const auto &r : scan.ranges)
        ranges.push_back({{"sector", r.sector}, {"count", r.count}});
    for (const auto &e : scan.extents)
        extents.push_back(
            {{"path", e.path}, {"offset", e.offset}, {"length", e.length}, {"sector", e.sector}});
    nlohmann::json special = nlohmann::json::array(), fsmap = nlohmann::json::array();
    for (const auto &r : scan.special)
        special.push_back({{"sector", r.sector}, {"count", r.count}, {"owner", r.owner}});
    for (const auto &r : scan.fsmap)
        fsmap.push_back({{"fmr_physical", r.physical},
                         {"fmr_length", r.length},
                         {"fmr_owner", r.owner},
                         {"fmr_offset", r.offset},
                         {"fmr_flags", r.flags}});
    return {{"disk", scan.disk},
            {"start_sector", scan.startSector},
            {"sectors", scan.sectors},
            {"ranges", ranges},
            {"extents", extents},
            {"files_scanned", scan.filesScanned},
            {"stopped_early", scan.stoppedEarly},
            {"bus", scan.bus},
            {"clears_poison", scan.clearsPoison},
            {"method", scan.method},
            {"fsmap_note", scan.fsmapNote},
            {"special", special},
            {"fsmap", fsmap},
            {"ran", scan.observed()},
            {"error", scan.observed() ? std::string() : scan.text}};
}

// The shape is checked first (validateLiveJson), so value() only fills what
// an older or shorter capture left out.
BadblockScan badblockScanFromJson(const nlohmann::json &j)
{
    BadblockScan scan;
    scan.disk = j.value("disk", "");
    scan.startSector = j.value("start_sector", std::uint64_t{0});
    scan.sectors = j.value("sectors", std::uint64_t{0});
    for (const auto &r : j.value("ranges", nlohmann::json::array()))
        scan.ranges.push_back(
            {r.value("sector", std::uint64_t{0}), r.value("count", std::uint64_t{0})});
    for (const auto &e : j.value("extents", nlohmann::json::array()))
        scan.extents.push_back({e.value("path", ""), e.value("offset", std::uint64_t{0}),
                                e.value("length", std::uint64_t{0}),
                                e.value("sector", std::uint64_t{0})});
    scan.filesScanned = j.value("files_scanned", std::uint64_t{0});
    scan.stoppedEarly = j.value("stopped_early", "");
    scan.bus = j.value("bus", "");
    scan.clearsPoison = j.value("clears_poison", true);
    scan.method = j.value("method", "fiemap"); // before GETFSMAP, the walk was the only method
    scan.fsmapNote = j.value("fsmap_note", "");
    for (const auto &r : j.value("special", nlohmann::json::array()))
        scan.special.push_back({r.value("sector", std::uint64_t{0}),
                                r.value("count", std::uint64_t{0}), r.value("owner", "")});
    for (const auto &r : j.value("fsmap", nlohmann::json::array()))
        scan.fsmap.push_back(
            {r.value("fmr_physical", std::uint64_t{0}), r.value("fmr_length", std::uint64_t{0}),
             r.value("fmr_owner", std::uint64_t{0}), r.value("fmr_offset", std::uint64_t{0}),
             r.value("fmr_flags", std::uint32_t{0})});
    if (j.value("ran", false))
        scan.observe();
    else
        scan.fail(j.value("error", "not recorded"));
    return scan;
}

} // namespace daxprobe
