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
    return {{"disk", scan.disk},
            {"start_sector", scan.startSector},
            {"sectors", scan.sectors},
            {"ranges", ranges},
            {"extents", extents},
            {"files_scanned", scan.filesScanned},
            {"stopped_early", scan.stoppedEarly},
            {"bus", scan.bus},
            {"clears_poison", scan.clearsPoison},
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
    if (j.value("ran", false))
        scan.observe();
    else
        scan.fail(j.value("error", "not recorded"));
    return scan;
}

} // namespace daxprobe
