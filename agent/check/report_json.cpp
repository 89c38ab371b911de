#include "agent/check/report_json.h"

#include "agent/check/report_cxl.h"
#include "agent/check/report_topology.h"
#include "agent/check/verdict_json.h"
#include "agent/json_fields.h"
#include "probes/readers/mountinfo.h"

#ifndef DAXPROBE_VERSION
#define DAXPROBE_VERSION "unknown"
#endif

namespace daxprobe
{

namespace
{

using json = nlohmann::json;

json orNull(const std::string &s)
{
    return s.empty() ? json(nullptr) : json(s);
}

json nfitJson(const NfitInfo &n)
{
    json j = {{"present", n.present}};
    if (!n.present) {
        j["error"] = orNull(n.readError);
        return j;
    }
    json spa = json::array();
    for (const auto &r : n.spaRanges)
        spa.push_back(
            {{"index", r.index}, {"type", r.type}, {"base", r.base}, {"length", r.length}});
    j.update({{"valid", n.valid()},
              {"signature", n.signature},
              {"length", n.length},
              {"revision", n.revision},
              {"checksum_ok", n.checksumOk},
              {"oem_id", n.oemId},
              {"pmem_ranges", n.pmemRangeCount()},
              {"spa_ranges", spa},
              {"memdev_count", n.memdevCount},
              {"problems", n.problems}});
    if (n.platformCapabilities)
        j["platform_capabilities"] = *n.platformCapabilities;
    return j;
}

json statxJson(const StatxEvidence &s)
{
    if (s.state == EvidenceState::NotRun)
        return nullptr;
    return {{"file", orNull(s.file)},
            {"dax", s.observed() ? json(s.dax) : json(nullptr)},
            {"error", s.observed() ? json(nullptr) : json(s.text)}};
}

json mapSyncJson(const MapSyncEvidence &m)
{
    bool ran = m.observed();
    return {{"ran", ran},
            {"ok", ran ? json(m.mapped) : json(nullptr)},
            {"is_pmem", ran && m.isPmem ? json(*m.isPmem) : json(nullptr)},
            {"error", ran ? orNull(m.text) : json(nullptr)},
            {"skipped", m.state == EvidenceState::Skipped ? json(m.text) : json(nullptr)}};
}

json historyJson(const std::vector<HistoryLine> &history)
{
    json out = json::array();
    for (const auto &h : history)
        out.push_back({{"message", h.message}, {"attempt", h.attempt}});
    return out;
}

json rangesJson(const std::vector<BadRange> &ranges)
{
    json out = json::array();
    for (const auto &r : ranges)
        out.push_back({{"sector", r.sector}, {"count", r.count}});
    return out;
}

json specialJson(const std::vector<SpecialRange> &special)
{
    json out = json::array();
    for (const auto &r : special)
        out.push_back({{"sector", r.sector}, {"count", r.count}, {"owner", r.owner}});
    return out;
}

// A mount's "badblocks" (agent/REPORT.md): the files its bad sectors hit.
json badblocksJson(const BadblockReport &br)
{
    const BadblockScan &scan = *br.scan;
    json files = json::array();
    for (const auto &f : br.files) {
        json pieces = json::array();
        for (const auto &p : f.pieces)
            pieces.push_back({{"offset", p.offset}, {"length", p.length}, {"sector", p.sector}});
        files.push_back({{"path", f.path}, {"damaged", pieces}, {"rewrite", orNull(f.rewrite)}});
    }
    return {{"disk", scan.disk},
            {"bad_sectors", br.badSectors},
            {"ranges", rangesJson(scan.ranges)},
            {"files", files},
            {"unowned", rangesJson(br.unowned)},
            {"special", specialJson(scan.special)},
            {"clears_poison", scan.clearsPoison},
            {"walk",
             {{"ran", scan.observed()},
              {"method", scan.method},
              {"fsmap_note", orNull(scan.fsmapNote)},
              {"files_scanned", scan.filesScanned},
              {"complete", scan.observed() && scan.stoppedEarly.empty()},
              {"stopped_early", orNull(scan.stoppedEarly)}}},
            {"verdict", verdictJson(br.verdict)}};
}

// A mount's "census" (agent/REPORT.md): every regular file's DAX attribute.
json censusJson(const DaxCensus &c)
{
    json exceptions = json::array();
    for (const auto &e : c.exceptions)
        exceptions.push_back({{"path", e.path}, {"reason", notDaxReasonName(e.reason)}});
    return {{"ran", c.observed()},
            {"error", c.observed() ? json(nullptr) : json(c.text)},
            {"files", c.files},
            {"files_seen", c.seen},
            {"sampled", orNull(c.sampled)},
            {"dax_files", c.daxFiles},
            {"not_dax",
             {{"inline_tail", c.inlineTail}, {"compressed", c.compressed}, {"unknown", c.unknown}}},
            {"stopped_early", orNull(c.stoppedEarly)},
            {"exceptions", exceptions}};
}

json mountJson(const MountReport &mr)
{
    const MountEntry &m = *mr.mount;
    const char *opt = daxOptionName(mr.daxOption);
    json j = {{"mount_point", m.mountPoint},
              {"source", m.source},
              {"fstype", m.fstype},
              {"mount_options", m.mountOptions},
              {"super_options", m.superOptions},
              {"dax_option", opt ? json(opt) : json(nullptr)},
              {"device", fmt::format("{}:{}", m.major, m.minor)},
              {"blockdev", mr.blockdev ? json(mr.blockdev->name) : json(nullptr)},
              {"disk", mr.blockdev ? json(mr.blockdev->disk()) : json(nullptr)},
              {"partition_start", mr.blockdev && mr.blockdev->partitionStart
                                      ? json(*mr.blockdev->partitionStart)
                                      : json(nullptr)},
              {"namespace", mr.ns ? json(mr.ns->dev) : json(nullptr)},
              {"pmd_offset", mr.pmdOffset ? json(*mr.pmdOffset) : json(nullptr)},
              {"queue_dax",
               mr.blockdev && mr.blockdev->queueDax ? json(*mr.blockdev->queueDax) : json(nullptr)},
              {"statx_dax", mr.live ? statxJson(mr.live->statx) : json(nullptr)},
              {"map_sync", mr.live ? mapSyncJson(mr.live->mapSync) : json(nullptr)},
              {"kmsg", mr.kmsg},
              {"kmsg_history", historyJson(mr.kmsgHistory)},
              {"verdict", verdictJson(mr.verdict)}};
    j["badblocks"] = mr.badblocks ? badblocksJson(*mr.badblocks) : json(nullptr);
    // Absent, not null, when none was taken (--root, captures before it).
    if (mr.live && mr.live->census.state != EvidenceState::NotRun)
        j["census"] = censusJson(mr.live->census);
    return j;
}

json faultsJson(const FaultFacts &f)
{
    json vm = json::object();
    for (const auto &name : vmstatFaultCounters())
        if (auto it = f.vmstat.find(name); it != f.vmstat.end())
            vm[name] = it->second;
    return {{"vmstat", vm},
            {"vmstat_error", orNull(f.vmstatError)},
            {"perf", {{"usable", f.perf.observed()}, {"reason", orNull(f.perf.text)}}},
            {"tracepoints",
             {{"usable", f.tracepoints.observed()},
              {"reason", orNull(f.tracepoints.text)},
              {"tracefs", orNull(f.tracepoints.tracefs)},
              {"events", f.tracepoints.events}}}};
}

} // namespace

nlohmann::json reportToJson(const Report &report)
{
    const Topology &topology = *report.topology;
    json j;
    j["schema"] = protocol::kCheckSchema;
    j["daxprobe_version"] = DAXPROBE_VERSION;
    j["kernel"] = orNull(report.kernelRelease);
    j["exit_code"] = report.exitCode;
    j["verdict"] = verdictJson(report.overall);
    j["warnings"] = report.warnings;
    j["bounce_buffer"] = report.bounceBuffer ? verdictJson(*report.bounceBuffer) : json(nullptr);
    j["struct_pages"] = json::array();
    for (const auto &c : report.structPages)
        j["struct_pages"].push_back({{"namespace", c.ns},
                                     {"map", c.map},
                                     {"where", c.where},
                                     {"bytes", c.bytes ? json(*c.bytes) : json(nullptr)},
                                     {"source", orNull(c.source)},
                                     {"verdict", verdictJson(c.verdict)}});
    j["nfit"] = nfitJson(*report.nfit);
    j["ndctl"] = {{"available", topology.observed()}, {"error", failureOrNull(topology)}};
    j["missing_libraries"] = json::array();
    for (const auto &l : report.missingLibraries)
        j["missing_libraries"].push_back(
            {{"soname", l->soname}, {"error", l->error}, {"leaves_unknown", l->unknown}});
    json buses = json::array();
    for (const auto &b : topology.buses)
        buses.push_back(busReportJson(b));
    j["buses"] = buses;
    json regions = json::array();
    for (const auto &r : report.regions) {
        json rj = regionReportJson(*r.region);
        rj["virtio_pmem"] = r.virtioPmem;
        regions.push_back(std::move(rj));
    }
    j["regions"] = regions;

    json nss = json::array();
    for (const auto &nr : report.namespaces) {
        json n = namespaceReportJson(*nr.ns);
        n["verdict"] = verdictJson(nr.verdict);
        nss.push_back(std::move(n));
    }
    j["namespaces"] = nss;
    json daxDevices = json::array();
    for (const auto &d : topology.daxDevices)
        daxDevices.push_back(daxDeviceReportJson(d));
    j["dax_devices"] = daxDevices;
    json dimms = json::array();
    for (const auto &dr : report.dimms) {
        json d = dimmReportJson(*dr.dimm);
        d["consequences"] = dr.consequences;
        d["dax_mounts"] = dr.daxMounts;
        d["verdict"] = verdictJson(dr.verdict);
        dimms.push_back(std::move(d));
    }
    j["dimms"] = dimms;
    // Only on a machine with CXL: elsewhere the document is as it was.
    if (report.cxl.present)
        j["cxl"] = cxlReportJson(report.cxl);

    json mounts = json::array();
    for (const auto &mr : report.mounts)
        mounts.push_back(mountJson(mr));
    j["mounts"] = mounts;

    json files = json::array();
    for (const auto &f : *report.files)
        files.push_back(
            {{"path", f.path},
             {"size", f.residency.sizeBytes},
             {"statx_dax", f.statx.observed() ? json(f.statx.dax) : json(nullptr)},
             {"error", f.statx.observed() ? json(nullptr) : orNull(f.statx.text)},
             {"residency",
              {{"method", orNull(f.residency.method)},
               {"resident_bytes",
                f.residency.observed() ? json(f.residency.residentBytes) : json(nullptr)},
               {"reason", orNull(f.residency.text)}}}});
    j["files"] = files;

    json mem = json::object();
    for (const auto &[k, v] : *report.meminfo)
        mem[k] = v;
    j["meminfo"] = mem;
    j["meminfo_error"] = orNull(report.meminfoError);
    j["faults"] = faultsJson(*report.faults);
    j["kmsg"] = {{"readable", report.kmsg.observed()}, {"error", failureOrNull(report.kmsg)}};
    return j;
}

} // namespace daxprobe
