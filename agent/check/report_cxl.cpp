#include "agent/check/report_cxl.h"

#include "agent/check/verdict_json.h"
#include "agent/json_fields.h"

namespace daxprobe
{

namespace
{

using json = nlohmann::json;

json cedtJson(const CedtInfo &c)
{
    json j = {{"present", c.present}};
    if (!c.present) {
        j["error"] = errorOrNull(c.readError);
        return j;
    }
    json chbs = json::array();
    for (const auto &h : c.hostBridges)
        chbs.push_back({{"uid", h.uid},
                        {"cxl_version", h.cxlVersion},
                        {"base", h.base},
                        {"length", h.length}});
    json cfmws = json::array();
    for (const auto &w : c.windows)
        cfmws.push_back({{"base", w.base},
                         {"size", w.size},
                         {"interleave_ways", w.interleaveWays},
                         {"granularity", w.granularity},
                         {"targets", w.targets},
                         {"restrictions", w.restrictionNames()}});
    j.update({{"length", c.length},
              {"checksum_ok", c.checksumOk},
              {"chbs", chbs},
              {"cfmws", cfmws},
              {"problems", c.problems}});
    return j;
}

json memdevJson(const CxlMemdevReport &mr)
{
    const CxlMemdev &m = *mr.memdev;
    return {{"dev", m.dev},
            {"serial", opt(m.serial)},
            {"pmem_size", m.pmemSize},
            {"ram_size", m.ramSize},
            {"endpoint", errorOrNull(m.endpoint)},
            {"verdict", mr.verdict ? verdictJson(*mr.verdict) : json(nullptr)}};
}

json portJson(const CxlPort &p)
{
    json dports = json::array();
    for (const auto &d : p.dports)
        dports.push_back({{"id", d.id}, {"device", errorOrNull(d.device)}});
    return {{"dev", p.dev},     {"kind", p.kind},    {"parent", errorOrNull(p.parent)},
            {"dports", dports}, {"uid", opt(p.uid)}, {"memdev", errorOrNull(p.memdev)}};
}

json decoderJson(const CxlDecoderReport &dr)
{
    const CxlDecoder &d = *dr.decoder;
    json j = {{"dev", d.dev},
              {"port", d.port},
              {"kind", d.kind},
              {"committed", opt(dr.committed)},
              {"region", errorOrNull(d.region)},
              {"targets", d.targets}};
    if (!d.mode.empty())
        j["mode"] = d.mode;
    if (d.start)
        j["start"] = *d.start;
    if (d.size)
        j["size"] = *d.size;
    if (d.interleaveWays)
        j["interleave_ways"] = *d.interleaveWays;
    if (d.kind == "root") {
        j["cap_pmem"] = d.capPmem;
        j["cap_ram"] = d.capRam;
    }
    return j;
}

json regionJson(const CxlRegionReport &rr)
{
    const CxlRegion &r = *rr.region;
    return {
        {"dev", r.dev},
        {"type", errorOrNull(r.type)},
        {"size", opt(r.size)},
        {"resource", opt(r.resource)},
        {"interleave_ways", opt(r.interleaveWays)},
        {"interleave_granularity", opt(r.granularity)},
        {"decode_state", !r.committed ? json(nullptr) : json(*r.committed ? "commit" : "reset")},
        {"root_decoder", r.rootDecoder},
        {"targets", r.targets},
        {"nd_region", errorOrNull(rr.ndRegion)},
        {"verdict", verdictJson(rr.verdict)}};
}

} // namespace

json cxlReportJson(const CxlReport &cxl)
{
    json memdevs = json::array(), ports = json::array(), decoders = json::array(),
         regions = json::array(), bridges = json::array(), problems = json::array();
    for (const auto &m : cxl.memdevs)
        memdevs.push_back(memdevJson(m));
    for (const auto &p : cxl.bus->ports)
        ports.push_back(portJson(p));
    for (const auto &d : cxl.decoders)
        decoders.push_back(decoderJson(d));
    for (const auto &r : cxl.regions)
        regions.push_back(regionJson(r));
    for (const auto &b : cxl.bus->bridges)
        bridges.push_back({{"dev", b.dev}, {"nd_bus", errorOrNull(b.ndBus)}});
    for (const auto &p : cxl.problems)
        problems.push_back(verdictJson(p));
    return {{"present", cxl.present},      {"pmem", cxl.pmem},   {"error", failureOrNull(*cxl.bus)},
            {"cedt", cedtJson(*cxl.cedt)}, {"memdevs", memdevs}, {"ports", ports},
            {"decoders", decoders},        {"regions", regions}, {"nvdimm_bridges", bridges},
            {"problems", problems}};
}

} // namespace daxprobe
