#include "probes/judges/cxl_verdict.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "probes/judges/cxl_refusals.h"
#include "probes/judges/remedies.h"

namespace daxprobe
{

namespace
{

std::string mib(std::uint64_t bytes)
{
    return fmt::format("{:.1f} MiB", bytes / double(1ULL << 20));
}

// A kernel line that says why CXL memory cannot be used, and whom it names.
struct RefusalLine {
    const CxlRefusal *refusal;
    std::string device;
    std::string message;
};

std::vector<RefusalLine> refusalLines(const KmsgFacts &kmsg)
{
    std::vector<RefusalLine> out;
    for (const auto &r : kmsg.records)
        if (const CxlRefusal *ref = findCxlRefusal(r.message))
            out.push_back({ref, cxlLineDevice(r.message), r.message});
    return out;
}

const RefusalLine *lineFor(const std::vector<RefusalLine> &lines, const char *code,
                           const std::string &device)
{
    for (auto it = lines.rbegin(); it != lines.rend(); ++it)
        if (it->refusal->code == std::string(code) && it->device == device)
            return &*it;
    return nullptr;
}

// The decoder's number within its port: decoderX.Y -> Y.
std::optional<unsigned> decoderIndex(const std::string &dev)
{
    auto dot = dev.rfind('.');
    unsigned v = 0;
    if (dot == std::string::npos ||
        std::from_chars(dev.data() + dot + 1, dev.data() + dev.size(), v).ec != std::errc())
        return std::nullopt;
    return v;
}

std::optional<bool> decoderCommitted(const CxlBus &bus, const CxlDecoder &d, bool passthrough)
{
    const CxlPort *port = bus.port(d.port);
    if (d.kind == "root" || !port)
        return std::nullopt; // the firmware's window, not an HDM decoder
    // HDM decoders commit in order: the first decoders_committed of the port.
    auto y = decoderIndex(d.dev);
    if (port->decodersCommitted && y)
        return *y < *port->decodersCommitted;
    const CxlRegion *region = nullptr;
    for (const auto &r : bus.regions)
        if (!d.region.empty() && r.dev == d.region)
            region = &r;
    if (!region || !region->committed)
        return std::nullopt;
    if (!*region->committed)
        return false;
    return !(passthrough && d.kind == "switch" && port->dports.size() == 1);
}

std::string ndRegionOf(const Topology &topology, const std::string &cxlRegion)
{
    // cxl_pmem gives the nd region the CXL region's id (ND_REGION_CXL), on
    // the bus its nvdimm bridge registered, whose provider is "CXL".
    for (const auto &r : topology.regions) {
        if (r.dev != cxlRegion)
            continue;
        for (const auto &b : topology.buses)
            if (b.dev == r.bus && b.provider == "CXL")
                return r.dev;
    }
    return {};
}

bool hasNamespace(const Topology &topology, const std::string &ndRegion)
{
    for (const auto &n : topology.namespaces)
        if (n.region == ndRegion)
            return true;
    return false;
}

struct Judge {
    const Facts &facts;
    const CxlReport &report;
    std::vector<RefusalLine> lines;

    Verdict region(const CxlRegion &r, const std::string &nd) const;
    Verdict regionWithoutNd(const CxlRegion &r, Verdict v) const;
    std::optional<Verdict> memdev(const CxlMemdev &m) const;
    std::string rootDecoderFor(const CxlMemdev &m) const;
    const CxlPort *fullPortFor(const CxlMemdev &m) const;
    void problems(CxlReport &out) const;
};

// The decoders of a committed region that its ports never committed.
std::vector<const CxlDecoderReport *> uncommitted(const CxlReport &report, const std::string &dev)
{
    std::vector<const CxlDecoderReport *> out;
    for (const auto &d : report.decoders)
        if (d.decoder->region == dev && d.decoder->kind == "switch" && d.committed == false)
            out.push_back(&d);
    return out;
}

Verdict passthrough(const CxlRegion &r, const std::vector<const CxlDecoderReport *> &decoders,
                    const CxlBus &bus, Verdict v)
{
    v.code = code::CxlPassthroughUncommitted;
    v.severity = Severity::Problem;
    v.summary = fmt::format("{} is committed, but its decode passes through a port decoder the "
                            "kernel never committed: its memory may not be reached at all",
                            r.dev);
    for (const auto *d : decoders) {
        const CxlPort *p = bus.port(d->decoder->port);
        v.evidence.push_back(
            {"cxl", fmt::format("{} of {} ({} downstream port{}): not committed", d->decoder->dev,
                                d->decoder->port, p ? p->dports.size() : 0,
                                p && p->dports.size() == 1 ? "" : "s")});
    }
    v.warnings.push_back(
        "kernels before 6.4 give a port with one downstream port a passthrough decoder and never "
        "program its HDM decoder; where the hardware decodes through it (QEMU 7.2 does), reads "
        "return zeros and writes vanish with no kernel message: do not keep data there");
    v.remedy = "give the host bridge a second root port (QEMU: another -device "
               "cxl-rp,port=1,chassis=0,slot=3 on the same pxb-cxl), or boot a kernel from 6.4 "
               "on; then create the region again";
    return v;
}

Verdict Judge::regionWithoutNd(const CxlRegion &r, Verdict v) const
{
    v.severity = Severity::Problem;
    const RefusalLine *line = lineFor(lines, code::CxlNoSerial, "pmem_" + r.dev);
    std::string noSerial;
    for (const auto &t : r.targets)
        if (const CxlDecoder *d = report.bus->decoder(t))
            if (const CxlPort *p = report.bus->port(d->port))
                for (const auto &m : report.bus->memdevs)
                    if (m.dev == p->memdev && m.serial.value_or(1) == 0)
                        noSerial = m.dev;
    if (line || !noSerial.empty()) {
        const CxlRefusal &ref = *findCxlRefusal("invalid or missing serial number");
        v.code = code::CxlNoSerial;
        v.summary = fmt::format("{} has no nd region: {}", r.dev, ref.cause);
        if (!noSerial.empty())
            v.evidence.push_back({"cxl", noSerial + " serial 0 (none)"});
        if (line)
            v.evidence.push_back({"kmsg", line->message});
        v.remedy = ref.remedy;
        return v;
    }
    v.code = code::CxlRegionNoNdRegion;
    v.summary = fmt::format("{} is committed but libnvdimm shows no nd region for it", r.dev);
    v.warnings.push_back("cxl_pmem makes the nd region: is it loaded (lsmod), and does "
                         "/sys/bus/cxl/devices show an nvdimm-bridge?");
    return v;
}

Verdict Judge::region(const CxlRegion &r, const std::string &nd) const
{
    Verdict v;
    v.evidence.push_back({"cxl", fmt::format("{} {}, {}, {} way(s), decode_state {}", r.dev,
                                             r.type.empty() ? "?" : r.type, mib(r.size.value_or(0)),
                                             r.interleaveWays.value_or(0),
                                             !r.committed   ? "?"
                                             : *r.committed ? "commit"
                                                            : "reset")});
    if (r.type == "ram") {
        v.code = code::CxlRamRegion;
        v.summary = fmt::format("{} is volatile (ram): system memory, not persistent", r.dev);
        return v;
    }
    if (r.committed != true) {
        v.code = code::CxlCommitFailed;
        v.severity = Severity::Problem;
        v.summary = fmt::format("{} is not committed: it decodes nothing", r.dev);
        if (const RefusalLine *l = lineFor(lines, code::CxlCommitFailed, r.dev)) {
            v.summary += fmt::format("; {}", l->refusal->cause);
            v.evidence.push_back({"kmsg", l->message});
            v.remedy = l->refusal->remedy;
        }
        return v;
    }
    if (auto decoders = uncommitted(report, r.dev); !decoders.empty())
        return passthrough(r, decoders, *report.bus, std::move(v));
    if (nd.empty())
        return regionWithoutNd(r, std::move(v));
    v.evidence.push_back({"ndctl", fmt::format("nd region {}", nd)});
    if (!hasNamespace(facts.topology, nd)) {
        v.code = code::CxlRegionNoNamespace;
        v.severity = Severity::Warning;
        v.summary = fmt::format("{} is nd region {}, which has no namespace yet", r.dev, nd);
        v.remedy = createFsdaxOn(nd);
        return v;
    }
    v.code = code::CxlRegionOk;
    v.summary = fmt::format("{} is committed and is nd region {} (its namespaces are judged "
                            "with the others)",
                            r.dev, nd);
    return v;
}

// The root decoder whose window a 1-way region of this memdev can use: one
// that may hold pmem and targets the host bridge above it alone.
std::string Judge::rootDecoderFor(const CxlMemdev &m) const
{
    const CxlBus &bus = *report.bus;
    const CxlPort *p = bus.port(m.endpoint);
    for (unsigned hops = 0; p && hops < 16 && !p->uid; ++hops)
        p = bus.port(p->parent);
    std::vector<std::string> fit;
    for (const auto &d : bus.decoders) {
        bool mine = p && p->uid && d.targets.size() == 1 && d.targets[0] == std::to_string(*p->uid);
        if (d.kind == "root" && d.capPmem && d.interleaveWays == 1u && (mine || !p || !p->uid))
            fit.push_back(d.dev);
    }
    return fit.size() == 1 ? fit.front() : std::string();
}

// The first port on the memdev's path (its endpoint up to its host bridge)
// whose HDM decoders all decode a region already. A new region takes a free
// decoder in every port it passes (the kernel's cxl_port_attach_region), so
// none can be made through that port.
const CxlPort *Judge::fullPortFor(const CxlMemdev &m) const
{
    const CxlBus &bus = *report.bus;
    const CxlPort *p = bus.port(m.endpoint);
    for (unsigned hops = 0; p && p->kind != "root" && hops < 16; ++hops) {
        bool any = false, free = false;
        for (const auto &d : bus.decoders)
            if (d.port == p->dev) {
                any = true;
                free |= d.region.empty();
            }
        if (any && !free)
            return p;
        p = bus.port(p->parent);
    }
    return nullptr;
}

// Why no region of the memdev can be made: `port`'s decoders are all taken.
void noFreeDecoder(const CxlBus &bus, const CxlPort &port, const std::string &memdev, Verdict &v)
{
    std::vector<std::string> taken;
    for (const auto &d : bus.decoders)
        if (d.port == port.dev) {
            v.evidence.push_back(
                {"cxl", fmt::format("{} of {}: region {}", d.dev, port.dev, d.region)});
            taken.push_back(d.region);
        }
    v.warnings.push_back(fmt::format(
        "no region of {} can be made, so no command is offered: a region takes a free HDM "
        "decoder in every port on its path, and the {} decoder(s) of {} decode {} already",
        memdev, taken.size(), port.dev, fmt::join(taken, ", ")));
}

std::optional<Verdict> Judge::memdev(const CxlMemdev &m) const
{
    if (m.pmemSize == 0)
        return std::nullopt;
    for (const auto &d : report.bus->decoders)
        if (!m.endpoint.empty() && d.port == m.endpoint && !d.region.empty())
            for (const auto &r : report.bus->regions)
                if (r.dev == d.region && r.type != "ram")
                    return std::nullopt;
    Verdict v;
    v.code = code::CxlNoRegion;
    v.severity = Severity::Warning;
    v.summary =
        fmt::format("{} has {} of persistent memory that no region uses", m.dev, mib(m.pmemSize));
    v.evidence.push_back({"cxl", fmt::format("{} pmem_size {}", m.dev, m.pmemSize)});
    std::string decoder = rootDecoderFor(m);
    if (m.endpoint.empty())
        v.warnings.push_back(m.dev + " has no endpoint port: cxl_mem has not attached it");
    else if (const CxlPort *full = fullPortFor(m))
        noFreeDecoder(*report.bus, *full, m.dev, v);
    else if (decoder.empty())
        v.warnings.push_back("no single pmem-capable 1-way window reaches its host bridge: "
                             "cxl list -D -d root shows the windows");
    else
        v.remedy = createCxlRegion(decoder, m.dev);
    for (const auto &l : lines)
        if (l.refusal->code == std::string(code::CxlCommitFailed))
            v.warnings.push_back("a region cannot commit on this machine until the cause of "
                                 "cxl_commit_failed is removed");
    return v;
}

Verdict refusalVerdict(const RefusalLine &l, std::string summary)
{
    Verdict v;
    v.code = l.refusal->code;
    v.severity = Severity::Problem;
    v.summary = std::move(summary) + ": " + l.refusal->cause;
    v.evidence.push_back({"kmsg", l.message});
    v.remedy = l.refusal->remedy;
    return v;
}

// What the kernel refused where no region or memdev is left to carry it.
void Judge::problems(CxlReport &out) const
{
    std::vector<std::string> seen;
    for (const auto &l : lines) {
        std::string key = std::string(l.refusal->code) + " " + l.device;
        if (std::find(seen.begin(), seen.end(), key) != seen.end())
            continue;
        seen.push_back(key);
        bool regionShown = false;
        for (const auto &r : report.bus->regions)
            regionShown |= l.device == r.dev || l.device == "pmem_" + r.dev;
        if (l.refusal->code == std::string(code::CxlMemdevMissing))
            out.problems.push_back(
                refusalVerdict(l, fmt::format("CXL memory device {} has no memdev", l.device)));
        else if (!regionShown)
            out.problems.push_back(
                refusalVerdict(l, fmt::format("{} could not be made", l.device)));
    }
    bool missing = false;
    for (const auto &p : out.problems)
        missing |= p.code == code::CxlMemdevMissing;
    if (facts.cedt.pmemWindow() && report.bus->memdevs.empty() && !missing) {
        Verdict v;
        v.code = code::CxlMemdevMissing;
        v.severity = Severity::Problem;
        v.summary = "the CEDT has a pmem-capable CXL window but no CXL memory device is "
                    "registered";
        v.evidence.push_back({"cedt", fmt::format("{} window(s)", facts.cedt.windows.size())});
        v.warnings.push_back("lspci -d ::0502 lists CXL memory devices; the kernel log "
                             "(dmesg | grep -i cxl) says why a driver gave up");
        out.problems.push_back(std::move(v));
    }
}

} // namespace

std::vector<const Verdict *> CxlReport::verdicts() const
{
    std::vector<const Verdict *> out;
    for (const auto &p : problems)
        out.push_back(&p);
    for (const auto &r : regions)
        out.push_back(&r.verdict);
    for (const auto &m : memdevs)
        if (m.verdict)
            out.push_back(&*m.verdict);
    return out;
}

bool passthroughForSingleDport(const std::string &kernelRelease)
{
    unsigned v[3] = {0, 0, 0}; // major, minor, patch of "6.1.0-57-amd64"
    const char *p = kernelRelease.data();
    const char *end = p + kernelRelease.size();
    for (unsigned &part : v) {
        auto r = std::from_chars(p, end, part);
        if (r.ec != std::errc() || r.ptr == end || *r.ptr != '.')
            break;
        p = r.ptr + 1;
    }
    if (v[0] == 0)
        return false; // no version to go by
    return v[0] < 6 || (v[0] == 6 && (v[1] < 3 || (v[1] == 3 && v[2] < 2)));
}

CxlReport judgeCxl(const Facts &facts)
{
    CxlReport out;
    out.cedt = &facts.cedt;
    out.bus = &facts.cxl;
    out.present = facts.cedt.exists || !facts.cxl.empty();
    out.pmem = facts.cedt.pmemWindow();
    for (const auto &m : facts.cxl.memdevs)
        out.pmem |= m.pmemSize > 0;
    if (!out.present)
        return out;
    bool passthrough = passthroughForSingleDport(facts.kernelRelease);
    for (const auto &d : facts.cxl.decoders)
        out.decoders.push_back({&d, decoderCommitted(facts.cxl, d, passthrough)});
    Judge judge{facts, out, refusalLines(facts.kmsg)};
    for (const auto &r : facts.cxl.regions) {
        std::string nd = ndRegionOf(facts.topology, r.dev);
        out.regions.push_back({&r, nd, judge.region(r, nd)});
    }
    for (const auto &m : facts.cxl.memdevs)
        out.memdevs.push_back({&m, judge.memdev(m)});
    judge.problems(out);
    return out;
}

} // namespace daxprobe
