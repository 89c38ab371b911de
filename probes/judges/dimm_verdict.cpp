#include "probes/judges/dimm_verdict.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace daxprobe
{

namespace
{

// The NFIT flags that say writes may not survive a power loss.
constexpr const char *kNotPersistent[] = {"not_armed", "save_fail", "restore_fail", "flush_fail"};

std::vector<std::string> persistenceFlags(const NdDimm &d)
{
    std::vector<std::string> out;
    for (const char *f : kNotPersistent)
        if (d.hasFlag(f))
            out.emplace_back(f);
    return out;
}

std::string commaJoined(const std::vector<std::string> &v)
{
    return fmt::format("{}", fmt::join(v, ", "));
}

} // namespace

Verdict judgeDimm(const NdDimm &d, const std::vector<std::string> &daxMounts)
{
    Verdict v;
    v.code = code::DimmOk;
    v.evidence.push_back({"nfit/flags", d.flags.empty() ? "none" : commaJoined(d.flags)});
    if (d.dirtyShutdown)
        v.evidence.push_back({"nfit/dirty_shutdown", std::to_string(*d.dirtyShutdown)});
    for (const auto &r : d.regions)
        if (r.readOnly)
            v.evidence.push_back({"region", r.region + " read_only 1"});

    auto failed = persistenceFlags(d);
    if (!failed.empty()) {
        v.code = code::DimmNotPersistent;
        v.severity = daxMounts.empty() ? Severity::Warning : Severity::Problem;
        v.summary = fmt::format("{} cannot guarantee persistence ({}): data written to it may "
                                "not survive a power loss",
                                d.dev, commaJoined(failed));
        if (!daxMounts.empty())
            v.summary +=
                fmt::format("; DAX filesystem(s) mounted on it: {}", commaJoined(daxMounts));
        // No reconfiguration helps: the cause is the DIMM.
        v.remedy = fmt::format("replace or service {} (its platform's tools); move the data off "
                               "it first. Reconfiguring its namespaces does not help.",
                               d.dev);
    } else if (d.hasFlag("map_fail")) {
        v.code = code::DimmMapFailed;
        v.severity = Severity::Warning;
        v.summary = fmt::format("{}: the platform could not map its memory (map_fail)", d.dev);
    } else if (d.hasFlag("smart_event")) { // smart_notify only says it can notify
        v.code = code::DimmHealthEvent;
        v.severity = Severity::Warning;
        v.summary = fmt::format("{} raised a health (SMART) event: `ndctl list -DH -d {}` shows "
                                "its health",
                                d.dev, d.dev);
    } else {
        v.summary = fmt::format("{}: no failure flags", d.dev);
    }
    return v;
}

std::vector<DimmReport> judgeDimms(const Topology &topology, const std::vector<DaxMount> &daxMounts)
{
    std::vector<DimmReport> out;
    for (const auto &d : topology.dimms) {
        DimmReport dr;
        dr.dimm = &d;
        bool notPersistent = !persistenceFlags(d).empty();
        for (const auto &r : d.regions) {
            if (r.readOnly)
                dr.consequences.push_back(
                    fmt::format("{} is read-only: the kernel refuses writes and namespace "
                                "reconfiguration there",
                                r.region));
            if (notPersistent)
                dr.consequences.push_back(fmt::format("{}: persistence not guaranteed", r.region));
            for (const auto &m : daxMounts)
                if (m.region == r.region)
                    dr.daxMounts.push_back(m.mountPoint);
        }
        dr.verdict = judgeDimm(d, dr.daxMounts);
        out.push_back(std::move(dr));
    }
    return out;
}

void withholdReconfiguration(const Topology &topology, const NdNamespace *ns, Verdict &v)
{
    if (!ns || v.remedy.empty())
        return;
    for (const auto &d : topology.dimms)
        for (const auto &r : d.regions)
            if (r.region == ns->region && r.readOnly) {
                v.warnings.push_back(fmt::format(
                    "{} is read-only because of {} (flags: {}): no namespace reconfiguration is "
                    "possible there; the cause is the DIMM",
                    r.region, d.dev, d.flags.empty() ? "none" : commaJoined(d.flags)));
                v.remedy.clear();
                return;
            }
}

} // namespace daxprobe
