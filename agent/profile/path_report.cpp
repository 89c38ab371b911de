#include "agent/profile/path_report.h"

#include <fmt/format.h>

#include "agent/fault_json.h"
#include "agent/json_fields.h"
#include "agent/text_fields.h"
#include "protocol/verdicts.h"

namespace daxprobe
{

namespace
{

using json = nlohmann::json;

json residencyJson(const Residency &r)
{
    return {{"method", r.method.empty() ? json(nullptr) : json(r.method)},
            {"resident_bytes", r.observed() ? json(r.residentBytes) : json(nullptr)}};
}

json profileJson(const FaultProfile &p, const MappingOutcome &m)
{
    const FaultCounts &c = p.counts;
    json faults = {{"minor", opt(c.minorFaults)},
                   {"major", opt(c.majorFaults)},
                   {"perf_error", errorOrNull(c.perfError)}};
    faults.update(daxFaultsJson(c));
    return {{"path", p.path},
            {"size", p.sizeBytes},
            {"dax", p.dax},
            {"access", p.write ? "write" : "read"},
            {"pages_touched", p.pagesTouched},
            {"sigbus_offset", p.sigbusOffset ? json(*p.sigbusOffset) : json(nullptr)},
            {"seconds", p.seconds},
            {"faults", faults},
            {"page_cache_before", residencyJson(p.before)},
            {"page_cache_after", residencyJson(p.after)},
            {"mapping",
             {{"code", m.code},
              {"summary", m.summary},
              {"advice", errorOrNull(m.advice)},
              {"cause", errorOrNull(m.cause)},
              {"pmd_pieces", p.layout.observed ? json(p.layout.pieces) : json(nullptr)},
              {"pmd_ready_pieces", p.layout.observed ? json(p.layout.ready) : json(nullptr)},
              {"device",
               {{"namespace", errorOrNull(p.device.ns)},
                {"provider", errorOrNull(p.device.provider)},
                {"align", p.device.ns.empty() ? json(nullptr) : json(p.device.align)}}}}}};
}

std::string profileText(const FaultProfile &p, const MappingOutcome &m)
{
    const FaultCounts &c = p.counts;
    std::string out = fmt::format("{} ({} bytes, {}; {} pages {} in {:.3f} s)\n", p.path,
                                  p.sizeBytes, p.dax ? "DAX" : "not DAX", p.pagesTouched,
                                  p.write ? "written" : "read", p.seconds);
    if (p.sigbusOffset)
        out += fmt::format("  stopped       SIGBUS at byte {}: the page there is poisoned, a media "
                           "error; `daxprobe check` names the damaged files\n",
                           *p.sigbusOffset);
    out += fmt::format("  page faults   {} minor, {} major{}\n", countOr(c.minorFaults),
                       countOr(c.majorFaults), c.perfError.empty() ? "" : " (" + c.perfError + ")");
    if (p.dax)
        out += fmt::format("  fs_dax        {} PMD ({} fell back), {} PTE{}\n",
                           countOr(c.pmdFaults), countOr(c.pmdFallbacks), countOr(c.pteFaults),
                           c.tracepointError.empty() ? "" : " (" + c.tracepointError + ")");
    else
        out += fmt::format("  page cache    {} -> {} bytes resident\n",
                           p.before.observed() ? std::to_string(p.before.residentBytes) : "?",
                           p.after.observed() ? std::to_string(p.after.residentBytes) : "?");
    out += fmt::format("  mapping       {}: {}\n", m.code, m.summary);
    if (!m.cause.empty())
        out += fmt::format("  cause         {}\n", m.cause);
    if (!m.advice.empty())
        out += fmt::format("  advice        {}\n", m.advice);
    return out;
}

} // namespace

json pathsJson(const std::vector<PathProfile> &profiles)
{
    json files = json::array();
    for (const auto &p : profiles)
        files.push_back(p.error.empty() ? profileJson(p.profile, p.mapping)
                                        : json{{"path", p.path}, {"error", p.error}});
    return {{"schema", protocol::kProfileSchema}, {"files", files}};
}

std::string pathsText(const std::vector<PathProfile> &profiles)
{
    std::string out;
    for (const auto &p : profiles)
        out += p.error.empty() ? profileText(p.profile, p.mapping)
                               : fmt::format("{}: {}\n", p.path, p.error);
    return out;
}

int pathsExitCode(const std::vector<PathProfile> &profiles)
{
    for (const auto &p : profiles)
        if (!p.error.empty() || p.profile.sigbusOffset)
            return 1;
    return 0;
}

} // namespace daxprobe
