#include "probes/judges/dimm_verdict.h"

#include <algorithm>

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

namespace
{

void addEvidence(const NdDimm &d, Verdict &v)
{
    v.evidence.push_back({"nfit/flags", d.flags.empty() ? "none" : commaJoined(d.flags)});
    if (d.dirtyShutdown)
        v.evidence.push_back({"nfit/dirty_shutdown", std::to_string(*d.dirtyShutdown)});
    const DimmHealth &h = d.health;
    if (!h.observed())
        v.evidence.push_back({"smart", h.text.empty() ? "not read" : h.text});
    if (h.healthState)
        v.evidence.push_back({"smart health_state", *h.healthState});
    if (h.shutdownDirty)
        v.evidence.push_back({"smart shutdown_state", *h.shutdownDirty ? "dirty" : "clean"});
    if (h.shutdownCount)
        v.evidence.push_back({"smart shutdown_count", std::to_string(*h.shutdownCount)});
    for (const auto &r : d.regions)
        if (r.readOnly)
            v.evidence.push_back({"region", r.region + " read_only 1"});
}

// What is on the DIMM, for a summary: its regions, namespaces and mounts.
std::string whatIsOn(const DimmReport &dr)
{
    std::vector<std::string> regions;
    for (const auto &r : dr.dimm->regions)
        regions.push_back(r.region);
    auto list = [](const std::vector<std::string> &v) {
        return v.empty() ? std::string("none") : commaJoined(v);
    };
    return fmt::format("regions {}; namespaces {}; mounts {}", list(regions), list(dr.namespaces),
                       list(dr.mounts));
}

// Not armed, and nothing can be written: every region read-only, something
// mounted there and all of it read-only. A filesystem mounted read-write
// (a region made writable by hand) keeps the flag a problem.
bool readOnlyByDesign(const DimmReport &dr, const std::vector<std::string> &failed)
{
    const NdDimm &d = *dr.dimm;
    if (failed != std::vector<std::string>{"not_armed"} || d.regions.empty() || dr.mounts.empty() ||
        dr.writableMount)
        return false;
    return std::all_of(d.regions.begin(), d.regions.end(),
                       [](const auto &r) { return r.readOnly; });
}

// The live count above the one the agent saw last: writes in flight at
// that shutdown may be lost.
bool judgeShutdownRise(const DimmReport &dr, const ShutdownCounts &seen, Verdict &v)
{
    const NdDimm &d = *dr.dimm;
    auto last = seen.find(dimmKey(d));
    if (!d.health.shutdownCount || last == seen.end() || *d.health.shutdownCount <= last->second)
        return false;
    v.code = code::DimmUnsafeShutdown;
    v.severity = Severity::Problem;
    v.evidence.push_back({"last seen shutdown_count", std::to_string(last->second)});
    v.summary = fmt::format("{} had {} unsafe shutdown(s) since the agent last looked ({} -> {}): "
                            "data written just before may be lost; on it: {}",
                            d.dev, *d.health.shutdownCount - last->second, last->second,
                            *d.health.shutdownCount, whatIsOn(dr));
    v.remedy = fmt::format("data written just before that shutdown may be lost: check it with the "
                           "application's own tools (its consistency check or log replay) on {}",
                           dr.mounts.empty() ? whatIsOn(dr) : commaJoined(dr.mounts));
    return true;
}

} // namespace

Verdict judgeDimm(const DimmReport &dr, const ShutdownCounts &seen)
{
    const NdDimm &d = *dr.dimm;
    const auto &daxMounts = dr.daxMounts;
    Verdict v;
    v.code = code::DimmOk;
    addEvidence(d, v);

    auto failed = persistenceFlags(d);
    if (readOnlyByDesign(dr, failed)) {
        v.code = code::DimmReadOnly;
        v.summary = fmt::format("{} is not armed and read-only by design: its regions are "
                                "read-only and what is on them is mounted read-only ({}), so "
                                "writes are refused and nothing is left to persist (a VMM's "
                                "shared read-only image: QEMU requires unarmed=on for a "
                                "readonly=on backend)",
                                d.dev, commaJoined(dr.mounts));
    } else if (!failed.empty()) {
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
    } else if (d.health.healthState == "fatal") {
        v.code = code::DimmHealthFatal;
        v.severity = Severity::Problem;
        v.summary = fmt::format("{}: its SMART health is fatal: the DIMM has failed; on it: {}",
                                d.dev, whatIsOn(dr));
        v.remedy = fmt::format("replace {} (its platform's tools); move the data off it first. "
                               "Reconfiguring its namespaces does not help.",
                               d.dev);
    } else if (judgeShutdownRise(dr, seen, v)) {
        // the rise is the verdict
    } else if (d.hasFlag("map_fail")) {
        v.code = code::DimmMapFailed;
        v.severity = Severity::Warning;
        v.summary = fmt::format("{}: the platform could not map its memory (map_fail)", d.dev);
    } else if (d.hasFlag("smart_event") || d.health.healthState == "critical") {
        // smart_notify only says it can notify
        v.code = code::DimmHealthEvent;
        v.severity = Severity::Warning;
        v.summary = d.health.healthState == "critical"
                        ? fmt::format("{}: its SMART health is critical", d.dev)
                        : fmt::format("{} raised a health (SMART) event: `ndctl list -DH -d {}` "
                                      "shows its health",
                                      d.dev, d.dev);
    } else {
        v.summary = fmt::format("{}: no failure flags", d.dev);
    }
    return v;
}

std::vector<DimmReport> judgeDimms(const Topology &topology, const std::vector<DaxMount> &daxMounts,
                                   const std::vector<DaxMount> &mounts, const ShutdownCounts &seen)
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
            for (const auto &m : mounts)
                if (m.region == r.region) {
                    dr.mounts.push_back(m.mountPoint);
                    dr.writableMount |= m.writable;
                }
            for (const auto &ns : topology.namespaces)
                if (ns.region == r.region && ns.size > 0)
                    dr.namespaces.push_back(ns.dev);
        }
        dr.verdict = judgeDimm(dr, seen);
        out.push_back(std::move(dr));
    }
    return out;
}

void withholdReconfiguration(const Topology &topology, const NdNamespace *ns, Verdict &v)
{
    if (!ns || v.remedy.empty() || !v.remedyReconfigures)
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
