#include "agent/profile_runner.h"

#include <fmt/format.h>

#include "agent/json_fields.h"
#include "agent/text_fields.h"
#include "probes/judges/profile_verdict.h"
#include "probes/readers/fault_profile.h"
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

} // namespace

ProfileOutcome runProfile(const ProfileOptions &options)
{
    ProfileOutcome out;
    out.report = {{"schema", protocol::kProfileSchema}, {"files", json::array()}};
    auto root = Root::open("/");
    if (!root || options.paths.empty()) {
        out.text = "daxprobe profile: nothing to do (give --path FILE)\n";
        return out;
    }
    out.exitCode = 0;
    for (const auto &path : options.paths) {
        Result<FaultProfile> profiled = profileFile(*root, path, options.write);
        if (!profiled) {
            std::string error = profiled.error().describe();
            out.exitCode = 1;
            out.report["files"].push_back({{"path", path}, {"error", error}});
            out.text += fmt::format("{}: {}\n", path, error);
            continue;
        }
        const FaultProfile &p = *profiled;
        MappingOutcome m = judgeMapping(p);
        const FaultCounts &c = p.counts;
        out.report["files"].push_back(
            {{"path", path},
             {"size", p.sizeBytes},
             {"dax", p.dax},
             {"access", p.write ? "write" : "read"},
             {"pages_touched", p.pagesTouched},
             {"seconds", p.seconds},
             {"faults",
              {{"minor", opt(c.minorFaults)},
               {"major", opt(c.majorFaults)},
               {"perf_error", c.perfError.empty() ? json(nullptr) : json(c.perfError)},
               {"dax_pmd", opt(c.pmdFaults)},
               {"dax_pmd_fallback", opt(c.pmdFallbacks)},
               {"dax_pte", opt(c.pteFaults)},
               {"tracepoint_error",
                c.tracepointError.empty() ? json(nullptr) : json(c.tracepointError)}}},
             {"page_cache_before", residencyJson(p.before)},
             {"page_cache_after", residencyJson(p.after)},
             {"mapping",
              {{"code", m.code},
               {"summary", m.summary},
               {"advice", m.advice.empty() ? json(nullptr) : json(m.advice)}}}});
        out.text += fmt::format("{} ({} bytes, {}; {} pages {} in {:.3f} s)\n", path, p.sizeBytes,
                                p.dax ? "DAX" : "not DAX", p.pagesTouched,
                                p.write ? "written" : "read", p.seconds);
        out.text += fmt::format("  page faults   {} minor, {} major{}\n", countOr(c.minorFaults),
                                countOr(c.majorFaults),
                                c.perfError.empty() ? "" : " (" + c.perfError + ")");
        if (p.dax)
            out.text +=
                fmt::format("  fs_dax        {} PMD ({} fell back), {} PTE{}\n",
                            countOr(c.pmdFaults), countOr(c.pmdFallbacks), countOr(c.pteFaults),
                            c.tracepointError.empty() ? "" : " (" + c.tracepointError + ")");
        else
            out.text +=
                fmt::format("  page cache    {} -> {} bytes resident\n",
                            p.before.observed() ? std::to_string(p.before.residentBytes) : "?",
                            p.after.observed() ? std::to_string(p.after.residentBytes) : "?");
        out.text += fmt::format("  mapping       {}: {}\n", m.code, m.summary);
        if (!m.advice.empty())
            out.text += fmt::format("  advice        {}\n", m.advice);
    }
    return out;
}

} // namespace daxprobe
