#include "agent/exercise/exercise_report.h"

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

json residency(const ExerciseRun &run, const Residency &r)
{
    if (run.dax())
        return {{"method", "not_applicable_dax"}, {"resident_bytes", nullptr}};
    return {{"method", r.method.empty() ? json(nullptr) : json(r.method)},
            {"resident_bytes", r.observed() ? json(r.residentBytes) : json(nullptr)}};
}

std::optional<std::int64_t> cachedDelta(const ExercisePhase &p)
{
    if (!p.cachedKbBefore || !p.cachedKbAfter)
        return std::nullopt;
    return *p.cachedKbAfter - *p.cachedKbBefore;
}

FaultNumbers faults(const ExercisePhase &p)
{
    return chooseFaults(p.counts.minorFaults, p.counts.majorFaults, p.rusageMinor, p.rusageMajor);
}

} // namespace

json exerciseJson(const ExerciseRun &run)
{
    json phases = json::array();
    for (const auto &p : run.phases) {
        FaultNumbers f = faults(p);
        json vm = json::object();
        for (const auto &[k, v] : p.vmstatDelta)
            vm[k] = v;
        phases.push_back(
            {{"name", p.name},
             {"bytes", p.bytes},
             {"seconds", p.seconds},
             {"cached_kb_before", opt(p.cachedKbBefore)},
             {"cached_kb_after", opt(p.cachedKbAfter)},
             {"cached_kb_delta", opt(cachedDelta(p))},
             {"page_cache_before", residency(run, p.before)},
             {"page_cache_after", residency(run, p.after)},
             {"faults", faultsJson(f, p.counts)},
             {"vmstat_delta", vm},
             {"footprint", {{"code", p.footprint.code}, {"summary", p.footprint.summary}}},
             {"error", errorOrNull(p.error)}});
    }
    return {{"schema", protocol::kExerciseSchema},
            {"path", run.path},
            {"size", run.sizeBytes},
            {"allocation", "posix_fallocate"},
            {"dax", run.dax()},
            {"statx_error", failureOrNull(run.statx)},
            {"phases", phases},
            {"footprint", {{"code", run.footprint.code}, {"summary", run.footprint.summary}}},
            {"error", errorOrNull(run.error)},
            {"removed", run.removed},
            {"remove_note", errorOrNull(run.removeNote)},
            {"remove_error", errorOrNull(run.removeError)},
            {"exit_code", exerciseExitCode(run)}};
}

std::string exerciseText(const ExerciseRun &run)
{
    if (!run.created)
        return fmt::format("error: {}\n", run.error);
    std::string out = fmt::format("{}: {} MiB, allocated whole (posix_fallocate), {}\n", run.path,
                                  run.sizeBytes >> 20,
                                  run.dax()            ? "DAX"
                                  : run.statx.failed() ? run.statx.text
                                                       : "not DAX");
    if (!run.phases.empty()) {
        out += fmt::format("{:<11} {:>8} {:>10} {:>12} {:>7} {:>6} {:>5} {:>8} {:>6}  {}\n",
                           "phase", "seconds", "Cached kB", "file kB", "minor", "major", "PMD",
                           "fallback", "PTE", "footprint");
        for (const auto &p : run.phases) {
            FaultNumbers f = faults(p);
            auto d = cachedDelta(p);
            std::string file =
                run.dax() ? "n/a (DAX)"
                : p.before.observed() && p.after.observed()
                    ? fmt::format("{:+}", (static_cast<std::int64_t>(p.after.residentBytes) -
                                           static_cast<std::int64_t>(p.before.residentBytes)) /
                                              1024)
                    : "?";
            out += fmt::format("{:<11} {:>8.3f} {:>10} {:>12} {:>7} {:>6} {:>5} {:>8} {:>6}  {}\n",
                               p.name, p.seconds, d ? fmt::format("{:+}", *d) : "?", file, f.minor,
                               f.major, countOr(p.counts.pmdFaults, "-"),
                               countOr(p.counts.pmdFallbacks, "-"),
                               countOr(p.counts.pteFaults, "-"), p.footprint.code);
        }
        const ExercisePhase &first = run.phases.front();
        if (faults(first).source != "perf")
            out +=
                fmt::format("faults: fallback to getrusage (perf: {})\n", first.counts.perfError);
        else if (!first.counts.perfNote.empty())
            out += fmt::format("faults: {}\n", first.counts.perfNote);
        if (!first.counts.tracepointError.empty())
            out += fmt::format("fs_dax: not counted ({})\n", first.counts.tracepointError);
        out += fmt::format("footprint: {} ({})\n", run.footprint.code, run.footprint.summary);
        for (const auto &p : run.phases)
            out += fmt::format("  {:<11} {}\n", p.name, p.footprint.summary);
    }
    if (!run.error.empty())
        out += fmt::format("error: {}\n", run.error);
    if (run.created)
        out += !run.removed             ? fmt::format("not removed: {}\n", run.removeError)
               : run.removeNote.empty() ? fmt::format("{} removed\n", run.path)
                                        : fmt::format("removed ({})\n", run.removeNote);
    return out;
}

int exerciseExitCode(const ExerciseRun &run)
{
    if (run.usageError)
        return 2;
    if (!run.error.empty() || (run.created && !run.removed))
        return 1;
    return 0;
}

} // namespace daxprobe
