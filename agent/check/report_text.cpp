#include "agent/check/report_text.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/text_escape.h"
#include "probes/judges/media_errors.h"

namespace daxprobe
{

namespace
{

std::string size(std::uint64_t bytes)
{
    if (bytes >= (1ULL << 30) && bytes % (1ULL << 20) == 0 && bytes >= (10ULL << 30))
        return fmt::format("{:.1f} GiB", bytes / double(1ULL << 30));
    if (bytes >= (1ULL << 20))
        return fmt::format("{:.1f} MiB", bytes / double(1ULL << 20));
    if (bytes >= 1024)
        return fmt::format("{} KiB", bytes / 1024);
    return fmt::format("{} B", bytes);
}

struct Style {
    TextStyle style;
    std::string mark(Severity s) const
    {
        const char *word = s == Severity::Ok ? "OK  " : s == Severity::Warning ? "WARN" : "FAIL";
        if (style != TextStyle::Color)
            return word;
        const char *c = s == Severity::Ok        ? "\033[32m"
                        : s == Severity::Warning ? "\033[33m"
                                                 : "\033[31m";
        return fmt::format("{}{}\033[0m", c, word);
    }
    // A verdict's lines (summary, evidence, warnings, fix) share its priority.
    std::string prefix(Severity s) const
    {
        if (style != TextStyle::Journal)
            return "";
        return s == Severity::Ok ? "<6>" : s == Severity::Warning ? "<4>" : "<3>";
    }
};

// Journal style: every line not already given a priority is information.
std::string prefixInfo(const std::string &text)
{
    std::string out;
    out.reserve(text.size() + text.size() / 16);
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t nl = text.find('\n', pos);
        std::size_t end = nl == std::string::npos ? text.size() : nl + 1;
        if (text.compare(pos, 1, "<") != 0)
            out += "<6>";
        out.append(text, pos, end - pos);
        pos = end;
    }
    return out;
}

void appendVerdict(std::string &out, const Verdict &v, const Style &st, const char *indent)
{
    // Everything but the colour marks comes from the examined system.
    std::string p = st.prefix(v.severity);
    out += fmt::format("{}{}{} {}: {}\n", p, indent, st.mark(v.severity), v.code,
                       printable(v.summary));
    for (const auto &e : v.evidence)
        out += fmt::format("{}{}       {:<10} {}\n", p, indent, e.check, printable(e.result));
    // A warning of an otherwise good verdict is still a warning.
    std::string pw = st.prefix(v.severity == Severity::Ok ? Severity::Warning : v.severity);
    for (const auto &w : v.warnings)
        out += fmt::format("{}{}       warning    {}\n", pw, indent, printable(w));
    if (!v.remedy.empty())
        out += fmt::format("{}{}       fix:       {}\n", p, indent, printable(v.remedy));
}

// The bad sectors under a mount, and each damaged file's rewrite.
void appendBadblocks(std::string &out, const BadblockReport &br, const Style &st)
{
    appendVerdict(out, br.verdict, st, "    ");
    for (const auto &f : br.files)
        if (!f.rewrite.empty())
            out += fmt::format("{}           rewrite:   {}\n", st.prefix(br.verdict.severity),
                               printable(f.rewrite));
}

std::string hex(std::optional<std::uint64_t> v)
{
    return v ? fmt::format("{:#x}", *v) : std::string("?");
}

// CXL: the firmware's windows, the memdevs and regions, each with its verdict.
void appendCxl(std::string &out, const CxlReport &cxl, const Style &st)
{
    const CedtInfo &cedt = *cxl.cedt;
    out += fmt::format("CXL        CEDT {}; {} memdev(s), {} region(s){}\n",
                       cedt.present ? fmt::format("{} bytes, checksum {}, {} host bridge(s), {} "
                                                  "window(s)",
                                                  cedt.length, cedt.checksumOk ? "ok" : "BAD",
                                                  cedt.hostBridges.size(), cedt.windows.size())
                       : cedt.readError.empty() ? std::string("absent")
                                                : "unreadable: " + printable(cedt.readError),
                       cxl.bus->memdevs.size(), cxl.bus->regions.size(),
                       cxl.bus->failed() ? ", /sys/bus/cxl: " + printable(cxl.bus->text) : "");
    for (const auto &p : cedt.problems)
        out += fmt::format("  CEDT     {}\n", printable(p));
    for (const auto &w : cedt.windows)
        out += fmt::format("  window   {:#x} size {}, {} way(s), host bridges {}, {}\n", w.base,
                           size(w.size), w.interleaveWays, fmt::join(w.targets, " "),
                           fmt::join(w.restrictionNames(), " "));
    for (const auto &mr : cxl.memdevs) {
        const CxlMemdev &m = *mr.memdev;
        out += fmt::format("  memdev   {:<8} serial {}, pmem {}, ram {}{}\n", printable(m.dev),
                           hex(m.serial), size(m.pmemSize), size(m.ramSize),
                           m.endpoint.empty() ? "" : ", " + printable(m.endpoint));
        if (mr.verdict)
            appendVerdict(out, *mr.verdict, st, "    ");
    }
    for (const auto &rr : cxl.regions) {
        const CxlRegion &r = *rr.region;
        out +=
            fmt::format("  region   {:<8} {} size {}, {} way(s), decode_state {}, nd region {}\n",
                        printable(r.dev), printable(r.type.empty() ? "?" : r.type),
                        size(r.size.value_or(0)), r.interleaveWays.value_or(0),
                        !r.committed   ? "?"
                        : *r.committed ? "commit"
                                       : "reset",
                        rr.ndRegion.empty() ? "none" : printable(rr.ndRegion));
        appendVerdict(out, rr.verdict, st, "    ");
    }
    for (const auto &p : cxl.problems)
        appendVerdict(out, p, st, "  ");
}

// The NFIT, the nd buses and regions, and whether ndctl could be read; on
// a machine with CXL, CXL first (no NFIT is normal there).
void appendPlatform(std::string &out, const Report &report, const Style &st)
{
    const NfitInfo &nfit = *report.nfit;
    const Topology &topology = *report.topology;
    if (report.cxl.present)
        appendCxl(out, report.cxl, st);
    if (nfit.present)
        out += fmt::format("NFIT       {} bytes, checksum {}, {} pmem range(s){}\n", nfit.length,
                           nfit.checksumOk ? "ok" : "BAD", nfit.pmemRangeCount(),
                           nfit.valid() ? "" : " (damaged)");
    else
        out += report.virtioPmem ? "NFIT       absent (virtio-pmem has none, by design)\n"
               : report.cxl.present
                   ? "NFIT       absent (CXL memory is described by the CEDT, not the NFIT)\n"
                   : "NFIT       absent\n";
    for (const auto &b : topology.buses)
        out += fmt::format("bus        {} ({})\n", printable(b.dev), printable(b.provider));
    for (const auto &rr : report.regions) {
        const NdRegion &r = *rr.region;
        out += fmt::format(
            "region     {:<12} {:<5} size {}, available {}, align {}, persistence {}{}\n",
            printable(r.dev), printable(r.type), size(r.size), size(r.availableSize), size(r.align),
            printable(r.persistenceDomain),
            r.badblockCount ? fmt::format(", {} bad blocks", r.badblockCount) : "");
    }
    if (topology.failed())
        out += fmt::format("ndctl      {}\n", printable(topology.text));
}

// The device the kernel numbers the mount's (its source may be /dev/root,
// UUID=... or any text), and its namespace: " (/dev/pmem0p1, 259:1, partition
// of pmem0 on namespace0.0)".
std::string deviceNote(const MountReport &mr)
{
    const MountEntry &m = *mr.mount;
    if (!mr.blockdev)
        return {};
    const BlockDevFacts &b = *mr.blockdev;
    std::string node = "/dev/" + b.name;
    std::string where = b.partition() ? ", partition of " + b.disk() : "";
    if (mr.ns)
        where += (b.partition() ? " on " : ", on ") + mr.ns->dev;
    if (node == m.source && where.empty())
        return {};
    return fmt::format(" ({}, {}:{}{})", node, m.major, m.minor, where);
}

void appendNamespacesAndMounts(std::string &out, const Report &report, const Style &st)
{
    if (!report.namespaces.empty())
        out += "\nNamespaces\n";
    for (const auto &nr : report.namespaces) {
        const NdNamespace &n = *nr.ns;
        std::string dev = !n.blockdev.empty()  ? "/dev/" + n.blockdev
                          : !n.chardev.empty() ? "/dev/" + n.chardev
                                               : "-";
        out +=
            fmt::format("  {:<14} {:<7} {:<12} size {}{}{}\n", printable(n.dev), printable(n.mode),
                        printable(dev), size(n.size), n.align ? ", align " + size(n.align) : "",
                        n.map.empty() ? "" : ", map " + printable(n.map));
        if (!n.badRanges.empty())
            out += fmt::format("    media errors: {}\n", printable(mediaErrorText(n)));
        appendVerdict(out, nr.verdict, st, "    ");
    }

    if (!report.mounts.empty())
        out += "\nMounts\n";
    for (const auto &mr : report.mounts) {
        out += fmt::format("  {:<14} {} on {}{}\n", printable(mr.mount->mountPoint),
                           printable(mr.mount->fstype), printable(mr.mount->source),
                           printable(deviceNote(mr)));
        appendVerdict(out, mr.verdict, st, "    ");
        if (mr.badblocks)
            appendBadblocks(out, *mr.badblocks, st);
    }
}

// The DIMM's SMART health in a line, or why there is none.
std::string healthLine(const DimmHealth &h)
{
    if (!h.observed())
        return h.state == EvidenceState::NotRun ? "not read (no live check)" : h.text;
    std::vector<std::string> parts;
    if (h.healthState)
        parts.push_back(*h.healthState);
    if (h.lifeUsedPercent)
        parts.push_back(fmt::format("life used {}%", *h.lifeUsedPercent));
    if (h.mediaTemperature)
        parts.push_back(fmt::format("media {} C", *h.mediaTemperature));
    if (h.controllerTemperature)
        parts.push_back(fmt::format("controller {} C", *h.controllerTemperature));
    if (h.shutdownDirty)
        parts.push_back(fmt::format("shutdown {}", *h.shutdownDirty ? "dirty" : "clean"));
    if (h.shutdownCount)
        parts.push_back(fmt::format("unsafe shutdowns {}", *h.shutdownCount));
    return parts.empty() ? "SMART gave no valid field" : fmt::format("{}", fmt::join(parts, ", "));
}

// One line per nmem, what it means for its regions, and its verdict.
void appendDimms(std::string &out, const Report &report, const Style &st)
{
    if (!report.dimms.empty())
        out += "\nDIMMs\n";
    for (const auto &dr : report.dimms) {
        const NdDimm &d = *dr.dimm;
        std::vector<std::string> regions;
        for (const auto &r : d.regions)
            regions.push_back(printable(r.region) + (r.readOnly ? " (read-only)" : ""));
        out += fmt::format("  {:<14} {:<8} flags {}, dirty shutdowns {}, regions {}\n",
                           printable(d.dev), printable(d.bus),
                           d.flags.empty() ? "none"
                                           : printable(fmt::format("{}", fmt::join(d.flags, " "))),
                           d.dirtyShutdown ? std::to_string(*d.dirtyShutdown) : "not reported",
                           regions.empty() ? "none" : fmt::format("{}", fmt::join(regions, ", ")));
        out += fmt::format("    health: {}\n", printable(healthLine(d.health)));
        for (const auto &c : dr.consequences)
            out += fmt::format("    {}\n", printable(c));
        appendVerdict(out, dr.verdict, st, "    ");
    }
}

void appendFiles(std::string &out, const std::vector<FileFacts> &files)
{
    if (!files.empty())
        out += "\nFiles\n";
    for (const auto &f : files) {
        std::string dax = f.statx.observed() ? (f.statx.dax ? "DAX" : "not DAX") : f.statx.text;
        std::string res =
            f.residency.observed()
                ? (f.residency.method == "not_applicable"
                       ? "page cache: none (DAX)"
                       : fmt::format("page cache: {} of {} ({})", size(f.residency.residentBytes),
                                     size(f.residency.sizeBytes), f.residency.method))
                : "residency: " + f.residency.text;
        out += fmt::format("  {}  {}, {}\n", printable(f.path), printable(dax), printable(res));
    }
}

// Page cache and fault counters, and whether the fault sources can be used.
void appendCounters(std::string &out, const Report &report)
{
    auto mem = [&](const char *k) {
        auto it = report.meminfo->find(k);
        return it == report.meminfo->end() ? std::string("?") : size(it->second);
    };
    out += fmt::format(
        "\nPage cache Cached {}, Buffers {}, Shmem {}, Mapped {}, Dirty {}, MemAvailable {}\n",
        mem("Cached"), mem("Buffers"), mem("Shmem"), mem("Mapped"), mem("Dirty"),
        mem("MemAvailable"));
    const FaultFacts &fl = *report.faults;
    auto vm = [&](const char *k) {
        auto it = fl.vmstat.find(k);
        return it == fl.vmstat.end() ? std::string("?") : std::to_string(it->second);
    };
    out += fmt::format("Faults     pgfault {}, pgmajfault {}, thp_fault_fallback {}\n",
                       vm("pgfault"), vm("pgmajfault"), vm("thp_fault_fallback"));
    // Not run: perf is probed on a live run only (--root, --replay of an old capture).
    auto source = [](const EvidenceOutcome &e, const std::string &usable) {
        if (e.observed())
            return usable;
        return e.state == EvidenceState::NotRun ? std::string("not probed")
                                                : "unusable: " + printable(e.text);
    };
    out += fmt::format("           perf counters: {}\n", source(fl.perf, "usable"));
    out += fmt::format(
        "           fs_dax tracepoints: {}\n",
        source(fl.tracepoints, fmt::format("{} events in {}", fl.tracepoints.events.size(),
                                           fl.tracepoints.tracefs)));
    if (report.kmsg.failed())
        out += fmt::format("           kernel log unreadable: {}\n", printable(report.kmsg.text));
}

} // namespace

std::string reportToText(const Report &report, TextStyle style)
{
    Style st{style};
    std::string out;
    out += fmt::format(
        "daxprobe check{}\n\n",
        report.kernelRelease.empty() ? "" : " (kernel " + printable(report.kernelRelease) + ")");
    appendPlatform(out, report, st);
    appendNamespacesAndMounts(out, report, st);
    appendDimms(out, report, st);
    appendFiles(out, *report.files);
    appendCounters(out, report);

    for (const auto &w : report.warnings)
        out += fmt::format("\n{}warning: {}\n", st.prefix(Severity::Warning), printable(w));
    for (const auto *l : report.missingLibraries)
        out += fmt::format("\n{} is not installed (or could not be loaded): unknown without it: "
                           "{}\n  ({})\n",
                           printable(l->soname), printable(l->unknown), printable(l->error));
    if (report.bounceBuffer || !report.structPages.empty())
        out += "\nMemory cost\n";
    if (report.bounceBuffer)
        appendVerdict(out, *report.bounceBuffer, st, "  ");
    for (const auto &c : report.structPages)
        appendVerdict(out, c.verdict, st, "  ");
    out += "\nVerdict\n";
    appendVerdict(out, report.overall, st, "  ");
    out += fmt::format("  exit code {}\n", report.exitCode);
    return style == TextStyle::Journal ? prefixInfo(out) : out;
}

} // namespace daxprobe
