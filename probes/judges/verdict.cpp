#include "probes/judges/verdict.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "probes/judges/bounce_buffer.h"
#include "probes/judges/dax_refusals.h"
#include "probes/judges/dimm_verdict.h"
#include "probes/judges/media_errors.h"
#include "probes/judges/remedies.h"
#include "probes/judges/struct_pages.h"
#include "probes/judges/virtio_pmem.h"
#include "probes/readers/root_facts.h"
#include "probes/readers/text_util.h"

namespace daxprobe
{

namespace
{

bool cannotDax(const NdNamespace *ns)
{
    return ns && (ns->mode == "raw" || ns->mode == "sector");
}

std::string deviceReason(const NdNamespace &ns)
{
    if (ns.mode == "sector")
        return fmt::format("{} is in sector (BTT) mode: the block translation layer hides the "
                           "memory, so there is no DAX",
                           ns.dev);
    return fmt::format("{} is a raw namespace: no struct page for its memory, so the "
                       "filesystem cannot map it directly",
                       ns.dev);
}

// "/ (pmem0p1), /srv (pmem0p2)": a few, once each; a container host
// bind-mounts one filesystem many times.
std::string mountList(const std::vector<NamespaceMount> &mounts)
{
    constexpr std::size_t kShown = 8;
    std::vector<std::string> names;
    for (const auto &m : mounts) {
        std::string name = fmt::format("{} ({})", m.mountPoint, m.blockdev);
        if (std::find(names.begin(), names.end(), name) != names.end())
            continue;
        if (names.size() == kShown)
            return fmt::format("{}, ... ({} mounts)", fmt::join(names, ", "), mounts.size());
        names.push_back(std::move(name));
    }
    return fmt::format("{}", fmt::join(names, ", "));
}

// A line of the mount in place now saying DAX was turned off. A refusal
// ("DAX unsupported by block device." alone) ended its mount attempt in
// failure, so it is never about a mount that exists (mount_history.h).
bool kmsgSaysOff(const std::vector<std::string> &kmsg, std::string *line)
{
    for (const auto &l : kmsg)
        if (classifyMountLine(l) == MountEvent::DaxTurnedOff) {
            *line = l;
            return true;
        }
    return false;
}

std::string historyText(const HistoryLine &h)
{
    const char *what = h.attempt == "failed"       ? "refused, that mount failed"
                       : h.attempt == "unmounted"  ? "since unmounted"
                       : h.attempt == "superseded" ? "since mounted again"
                                                   : "its outcome was not logged";
    return fmt::format("earlier mount attempt ({}): {}", what, h.message);
}

std::string daxctlState(const DaxDevice &d)
{
    std::string s = fmt::format("{} mode {}", d.chardev, d.mode.empty() ? d.state : d.mode);
    if (d.totalMemblocks)
        s += fmt::format(", {} of {} memory blocks online", d.onlineMemblocks.value_or(0),
                         *d.totalMemblocks);
    if (d.movable)
        s += *d.movable ? ", movable" : ", not movable";
    return s;
}

// kmem owns the device: its memory is ordinary RAM in the page allocator.
void judgeSystemRam(const NdNamespace &ns, const DaxDevice &d, Verdict &v)
{
    v.code = code::SystemRam;
    v.severity = Severity::Problem;
    v.summary = fmt::format("{} is system RAM (daxctl mode system-ram, driver kmem): the page "
                            "allocator uses it as ordinary memory, its contents are not "
                            "persistent, and /dev/{} cannot be mapped",
                            ns.dev, d.chardev);
    v.remedy = fmt::format("daxctl reconfigure-device --mode=devdax --force {}   # offlines its "
                           "memory first: whatever the kernel placed there must move",
                           shellQuote(d.chardev));
    if (d.movable == false)
        v.warnings.push_back("its memory is online but not movable (ZONE_NORMAL): offlining can "
                             "fail while the kernel holds pages there; reconfigure before it is "
                             "onlined (daxctl online-memory --no-movable was used, or the "
                             "memory_hotplug default)");
}

} // namespace

Verdict judgeNamespace(const NdNamespace &ns, const DaxDevice *dax,
                       const std::vector<NamespaceMount> &mounts)
{
    Verdict v;
    v.evidence.push_back(
        {"ndctl", fmt::format("mode {}{}", ns.mode, ns.map.empty() ? "" : ", map " + ns.map)});
    if (dax)
        v.evidence.push_back({"daxctl", daxctlState(*dax)});
    if (dax && dax->mode == "system-ram") {
        judgeSystemRam(ns, *dax, v);
    } else if (ns.mode == "fsdax" || ns.mode == "devdax") {
        v.code = code::DaxCapable;
        if (ns.mode == "devdax")
            v.summary = fmt::format("{} is device-DAX: map /dev/{} directly", ns.dev, ns.chardev);
        else if (mounts.empty())
            v.summary =
                fmt::format("{} can do DAX: mount /dev/{} with -o dax", ns.dev, ns.blockdev);
        else
            v.summary =
                fmt::format("{} can do DAX (fsdax); mounted: {}", ns.dev, mountList(mounts));
        if (ns.align != 0 && ns.align < kPmdSize) {
            v.severity = Severity::Warning;
            v.warnings.push_back(
                fmt::format("align is {} KiB: 2 MiB (PMD) mappings are not guaranteed; "
                            "'daxprobe profile --path FILE' shows how faults are served ({})",
                            ns.align / 1024, realign(ns)));
        }
    } else {
        v.code = code::DeviceCannotDax;
        v.severity = Severity::Problem;
        v.summary = deviceReason(ns);
        bool holdsRoot = std::any_of(mounts.begin(), mounts.end(),
                                     [](const NamespaceMount &m) { return m.mountPoint == "/"; });
        if (holdsRoot) {
            v.warnings.push_back(fmt::format("{} holds the root filesystem: it cannot be "
                                             "reconfigured from inside (see the mount's remedy)",
                                             ns.dev));
        } else if (reconfigurable(ns)) {
            v.remedy =
                createFsdax(ns.dev) + "   # reconfigures the namespace: back up its data first";
            v.remedyReconfigures = true;
        } else {
            v.warnings.push_back(tooSmallToReconfigure(ns));
        }
    }
    return v;
}

namespace
{

// The filesystem rebuilt on an fsdax namespace, or why ndctl would refuse it.
void offerRebuild(const MountTarget &t, const NdNamespace &ns, Verdict &v)
{
    if (reconfigurable(ns)) {
        v.remedy = rebuildOnFsdax(t, ns);
        v.remedyReconfigures = rebuildReconfigures(t);
    } else {
        v.warnings.push_back(tooSmallToReconfigure(ns));
    }
}

// What was read about the mount, as the verdict's evidence.
// offLine: the kernel's line saying DAX is off, if it said so.
std::vector<Evidence> mountEvidence(const MountReport &mr, const std::string *offLine)
{
    std::vector<Evidence> ev;
    const BlockDevFacts *blockdev = mr.blockdev;
    const char *optName = daxOptionName(mr.daxOption);
    ev.push_back({"mountinfo", optName ? fmt::format("dax={}", optName) : "no dax option"});
    if (blockdev && blockdev->queueDax)
        ev.push_back({"queue/dax", fmt::format("/sys/block/{}/queue/dax = {}", blockdev->disk(),
                                               *blockdev->queueDax ? 1 : 0)});
    if (mr.ns)
        ev.push_back({"ndctl", fmt::format("{}{} on {} (mode {})", blockdev ? blockdev->name : "?",
                                           blockdev && blockdev->partition()
                                               ? " (a partition of " + blockdev->disk() + ")"
                                               : "",
                                           mr.ns->dev, mr.ns->mode)});
    if (const MountLiveFacts *live = mr.live) {
        if (live->statx.observed())
            ev.push_back(
                {"statx", fmt::format("STATX_ATTR_DAX {} on {}", live->statx.dax ? "set" : "clear",
                                      live->statx.file)});
        else if (live->statx.state != EvidenceState::NotRun)
            ev.push_back({"statx", "not checked: " + live->statx.text});
        if (live->mapSync.observed())
            ev.push_back({"map_sync", live->mapSync.mapped
                                          ? "MAP_SYNC mapping succeeded"
                                          : "MAP_SYNC refused: " + live->mapSync.text});
        else if (live->mapSync.state == EvidenceState::Skipped)
            ev.push_back({"map_sync", "skipped: " + live->mapSync.text});
        if (live->census.observed())
            ev.push_back({"census", censusText(live->census)});
        else if (live->census.failed())
            ev.push_back({"census", "not taken: " + live->census.text});
    }
    if (offLine)
        ev.push_back({"kmsg", *offLine});
    for (const auto &h : mr.kmsgHistory)
        ev.push_back({"kmsg_history", historyText(h)});
    return ev;
}

// The filesystem starts off a 2 MiB boundary of physical memory.
std::string pmdOffsetWarning(const MountReport &mr)
{
    const BlockDevFacts &b = *mr.blockdev;
    std::string where =
        b.partition()
            ? fmt::format("its partition {} starts {} KiB into {}, whose data starts at physical "
                          "address {:#x}",
                          b.name, b.partitionStart.value_or(0) / 1024, b.disk(), *mr.ns->dataStart)
            : fmt::format("{}'s data starts at physical address {:#x}", b.disk(),
                          *mr.ns->dataStart);
    return fmt::format(
        "{} starts {} KiB off a 2 MiB boundary of physical memory ({}): its 2 MiB-aligned "
        "extents are not 2 MiB-aligned in memory, so every 2 MiB (PMD) fault falls back to 4 KiB "
        "pages ('daxprobe profile --path FILE' shows the fallbacks). The fix is the layout, made "
        "where the image is built: {}",
        mr.target.mountPoint, *mr.pmdOffset / 1024, where,
        b.partition() ? fmt::format("a partition start {} KiB later (or earlier), so that the "
                                    "partition begins on a 2 MiB boundary of memory",
                                    (kPmdSize - *mr.pmdOffset) / 1024)
                      : "a namespace aligned to 2 MiB (ndctl create-namespace --align 2M)");
}

// Files are DAX (statxDax), or dax=always on a DAX-capable device says so.
Verdict judgeDaxActive(const MountReport &mr, bool statxDax, Verdict v)
{
    const MountEntry &m = *mr.mount;
    v.code = code::DaxActive;
    v.summary = statxDax ? fmt::format("DAX is in effect on {}", m.mountPoint)
                         : fmt::format("DAX is on for {} (dax=always on a DAX-capable device; "
                                       "no file could be examined to confirm)",
                                       m.mountPoint);
    if (!statxDax)
        v.severity = Severity::Warning;
    // MAP_SYNC is a promise about persistent media; virtiofs DAX makes none,
    // and virtio-pmem refuses it by design (asynchronous flush).
    const MountLiveFacts *live = mr.live;
    if (mr.blockdev && live && live->mapSync.observed() && !live->mapSync.mapped) {
        v.severity = Severity::Warning;
        v.warnings.push_back(
            mr.virtioPmem ? "MAP_SYNC refused as expected: " + virtioPmemConsequence()
                          : "MAP_SYNC was refused although files are DAX: " + live->mapSync.text);
    }
    if (mr.ns && mr.ns->align != 0 && mr.ns->align < kPmdSize)
        v.warnings.push_back(fmt::format("{} align is {} KiB: 2 MiB (PMD) mappings are not "
                                         "guaranteed ('daxprobe profile --path FILE' shows them)",
                                         mr.ns->dev, mr.ns->align / 1024));
    if (mr.pmdOffset && *mr.pmdOffset != 0)
        v.warnings.push_back(pmdOffsetWarning(mr));
    return v;
}

// virtio-fs without DAX files: where the data lives, and why (no window).
Verdict judgeVirtiofs(const MountReport &mr, bool statxRan, Verdict v)
{
    const MountEntry &m = *mr.mount;
    v.code = code::VirtiofsPageCache;
    v.severity = Severity::Warning;
    v.summary = fmt::format("{} is virtio-fs (tag {}) {}: this guest copies what it reads into "
                            "its own page cache",
                            m.mountPoint, m.source,
                            statxRan ? "and its files are not DAX"
                                     : "and no file could be examined for DAX");
    v.warnings.push_back(virtiofsNoWindow());
    v.remedy = virtiofsWithoutWindow();
    return v;
}

// DAX was asked for but files are not DAX: the silent fallback.
Verdict judgeSilentlyOff(const MountReport &mr, bool deviceDax, Verdict v)
{
    const MountEntry &m = *mr.mount;
    v.code = code::DaxSilentlyOff;
    v.severity = Severity::Problem;
    if (cannotDax(mr.ns))
        v.summary = fmt::format("{} was mounted with dax but DAX is off: {}", m.mountPoint,
                                deviceReason(*mr.ns));
    else if (!deviceDax)
        v.summary = fmt::format("{} was mounted with dax but {} cannot do DAX", m.mountPoint,
                                mr.blockdev ? "/dev/" + mr.blockdev->name : m.source);
    else
        v.summary = fmt::format("{} was mounted with dax but its files are not DAX", m.mountPoint);
    if (cannotDax(mr.ns))
        offerRebuild(mr.target, *mr.ns, v);
    else if (m.fstype == "virtiofs") {
        v.warnings.push_back(virtiofsNoWindow());
        v.remedy = "mount without dax, or " + virtiofsWithoutWindow();
    } else
        v.remedy = remountDax(mr.target);
    return v;
}

// DAX was not asked for: per-file mode, a device that cannot, or no option.
Verdict judgeNotRequested(const MountReport &mr, Verdict v)
{
    const MountEntry &m = *mr.mount;
    if (mr.daxOption == DaxOption::Inode) {
        v.code = code::DaxNotRequested;
        v.severity = Severity::Warning;
        v.summary =
            fmt::format("{} is dax=inode: only files with the DAX flag (xfs_io -c 'chattr +x') "
                        "use DAX, and the file examined has none",
                        m.mountPoint);
        v.remedy = remountDax(mr.target);
        return v;
    }
    if (cannotDax(mr.ns)) {
        v.code = code::DeviceCannotDax;
        v.severity = Severity::Problem;
        v.summary = fmt::format("{} is on {}", m.mountPoint, deviceReason(*mr.ns));
        offerRebuild(mr.target, *mr.ns, v);
        return v;
    }
    v.code = code::DaxNotRequested;
    v.severity = Severity::Problem;
    v.summary = fmt::format("{} is on persistent memory but mounted without dax: every read goes "
                            "through the page cache",
                            m.mountPoint);
    v.remedy = remountDax(mr.target);
    return v;
}

Verdict judgeMountState(const MountReport &mr)
{
    const MountEntry &m = *mr.mount;
    DaxOption opt = mr.daxOption;
    std::string offLine;
    bool kmsgOff = kmsgSaysOff(mr.kmsg, &offLine);
    Verdict v;
    v.evidence = mountEvidence(mr, kmsgOff ? &offLine : nullptr);

    bool statxRan = mr.live && mr.live->statx.observed();
    bool statxDax = statxRan && mr.live->statx.dax;
    bool deviceDax = mr.blockdev && mr.blockdev->queueDax.value_or(false);
    bool optionOn = opt == DaxOption::Always;
    // Without a dax option XFS and ext4 decide per file (dax=inode).
    bool perFile = opt == DaxOption::Inode ||
                   (opt == DaxOption::None && (m.fstype == "xfs" || m.fstype == "ext4"));
    if (perFile && deviceDax && !kmsgOff)
        return judgePerFile(mr, std::move(v));
    // Without a window the kernel refuses dax=always, so a virtio-fs mount
    // without DAX files is plain or dax=inode: dax=always would not help.
    if (m.fstype == "virtiofs" && !statxDax && !optionOn)
        return judgeVirtiofs(mr, statxRan, std::move(v));
    // The mount says DAX and files are, but not all of them.
    if (optionOn && !kmsgOff && censusShowsNotDax(mr, deviceDax))
        return judgeFilesNotDax(mr, std::move(v));
    // Direct proof beats every inference: a file with the DAX attribute.
    if (statxDax || (!statxRan && optionOn && deviceDax && !kmsgOff))
        return judgeDaxActive(mr, statxDax, std::move(v));
    // DAX was asked for (the option is still shown, or the kernel said it
    // refused) but files are not DAX.
    if (optionOn || (kmsgOff && opt != DaxOption::Inode))
        return judgeSilentlyOff(mr, deviceDax, std::move(v));
    return judgeNotRequested(mr, std::move(v));
}

// What the kernel said this filesystem cannot do: a line of the mount in
// place now, else the latest of an earlier attempt.
const DaxRefusal *refusalOf(const std::vector<std::string> &kmsg,
                            const std::vector<HistoryLine> &history, std::string *line)
{
    for (const auto &l : kmsg)
        if (const DaxRefusal *r = findDaxRefusal(l)) {
            *line = l;
            return r;
        }
    for (auto it = history.rbegin(); it != history.rend(); ++it)
        if (const DaxRefusal *r = findDaxRefusal(it->message)) {
            *line = it->message;
            return r;
        }
    return nullptr;
}

} // namespace

Verdict judgeMount(const MountReport &mr)
{
    Verdict v = judgeMountState(mr);
    // Files are not DAX and the kernel said why: remounting with dax cannot
    // help, only the cause's own remedy does. A device that cannot DAX is
    // the first cause (its remedy rebuilds everything).
    std::string line;
    const DaxRefusal *r = nullptr;
    if ((v.code == code::DaxNotRequested || v.code == code::DaxSilentlyOff) && !cannotDax(mr.ns))
        r = refusalOf(mr.kmsg, mr.kmsgHistory, &line);
    if (r) {
        v.summary += fmt::format("; the kernel refuses DAX on this filesystem: {}", r->cause);
        v.remedy = r->remedy(mr.target);
        bool shown = false;
        for (const auto &e : v.evidence)
            shown |= e.result.find(line) != std::string::npos;
        if (!shown)
            v.evidence.push_back({"kmsg", line});
    }
    return v;
}

namespace
{

// Whether the namespace is on a virtio-pmem region, as its region's report says.
bool onVirtioPmem(const Report &report, const NdNamespace &ns)
{
    for (const auto &r : report.regions)
        if (r.region->dev == ns.region)
            return r.virtioPmem;
    return false;
}

// The mount's facts gathered, and what is decided about it once.
MountReport describeMount(const Facts &facts, const Report &report, const MountEntry &m)
{
    MountReport mr;
    mr.mount = &m;
    mr.daxOption = daxOption(m);
    mr.blockdev = facts.blockdevByNumber(m.major, m.minor);
    mr.ns = mr.blockdev ? facts.topology.namespaceByBlockdev(mr.blockdev->disk()) : nullptr;
    mr.target = mountTarget(m, mr.blockdev, facts.kernelCmdline);
    if (mr.ns && mr.ns->dataStart && mr.blockdev->partitionStart)
        mr.pmdOffset = (*mr.ns->dataStart + *mr.blockdev->partitionStart) % kPmdSize;
    mr.virtioPmem = mr.ns && onVirtioPmem(report, *mr.ns);
    if (auto it = facts.mountLive.find(m.mountPoint); it != facts.mountLive.end())
        mr.live = &it->second;
    std::string dev = mr.blockdev ? mr.blockdev->name : std::string();
    DeviceKmsg dk = attributeKmsg(facts.kmsg.records, dev);
    mr.kmsg = std::move(dk.current);
    mr.kmsgHistory = std::move(dk.history);
    for (const auto &f : facts.files)
        if (mountOfPath(facts.mounts, f.path) == &m)
            mr.files.push_back(&f);
    if (auto it = facts.badblockScans.find(m.mountPoint); it != facts.badblockScans.end())
        mr.badblocks = judgeBadblocks(it->second);
    return mr;
}

// The filesystems on the namespace's disk or its partitions.
std::vector<NamespaceMount> mountsOf(const Facts &facts, const NdNamespace &ns)
{
    std::vector<NamespaceMount> out;
    if (ns.blockdev.empty())
        return out;
    for (const auto &m : facts.mounts)
        if (const BlockDevFacts *b = facts.blockdevByNumber(m.major, m.minor);
            b && b->disk() == ns.blockdev)
            out.push_back({m.mountPoint, b->name});
    return out;
}

// What was read, shown as found.
void describeSystem(const Facts &facts, Report &report)
{
    report.kernelRelease = facts.kernelRelease;
    report.nfit = &facts.nfit;
    report.topology = &facts.topology;
    for (const auto &r : facts.topology.regions) {
        report.regions.push_back({&r, isVirtioPmem(facts.topology, r)});
        report.virtioPmem |= report.regions.back().virtioPmem;
    }
    report.files = &facts.files;
    report.meminfo = &facts.meminfo;
    report.meminfoError = facts.meminfoError;
    report.faults = &facts.faults;
    report.kmsg = static_cast<const EvidenceOutcome &>(facts.kmsg);
}

void systemWarnings(const Facts &facts, Report &report)
{
    report.bounceBuffer = judgeBounceBuffer(facts.kmsg.bootMemory);
    report.structPages = judgeStructPages(facts.topology);
    for (const auto &l : facts.missingLibraries)
        report.missingLibraries.push_back(&l);
    if (facts.nfit.present && !facts.nfit.valid())
        for (const auto &p : facts.nfit.problems)
            report.warnings.push_back("NFIT: " + p);
    for (const auto &r : report.regions)
        if (r.virtioPmem)
            report.warnings.push_back(
                virtioPmemNote(facts.topology, *r.region, facts.nfit.present));
    for (const auto &r : facts.topology.regions)
        if (r.badblockCount > 0)
            report.warnings.push_back(fmt::format("{}: {} bad blocks", r.dev, r.badblockCount));
}

// CXL pmem, not one namespace and no CXL problem (capacity not in use yet):
// not "no persistent memory" (no NFIT is normal there).
void judgeCxlWithoutNamespace(const CxlReport &cxl, Verdict &o)
{
    o.code = code::NoPmemNamespace;
    o.severity = Severity::Problem;
    o.summary = "CXL persistent memory is present but no namespace is active";
    o.evidence.push_back(
        {"cedt", cxl.cedt->present
                     ? fmt::format("{} window(s), {} pmem-capable", cxl.cedt->windows.size(),
                                   cxl.cedt->pmemWindow() ? "some" : "none")
                     : "absent"});
    o.evidence.push_back({"cxl", fmt::format("{} memdev(s), {} region(s)", cxl.bus->memdevs.size(),
                                             cxl.bus->regions.size())});
    for (const Verdict *v : cxl.verdicts())
        if (v->severity != Severity::Ok && o.remedy.empty())
            o.remedy = v->remedy;
}

// No persistent memory to judge: says why and what gives it. False when there is.
bool judgeNoPmem(const Facts &facts, const CxlReport &cxl, Verdict &o)
{
    bool anyPmemRegion = false;
    for (const auto &r : facts.topology.regions)
        anyPmemRegion |= r.type == "pmem";
    if (facts.topology.namespaces.empty() && cxl.pmem && !facts.nfit.present) {
        // A CXL problem says what stands in the way: the overall verdict
        // counts it (problems_found), as for any other problem.
        for (const Verdict *v : cxl.verdicts())
            if (v->severity == Severity::Problem)
                return false;
        judgeCxlWithoutNamespace(cxl, o);
        return true;
    }
    if (!facts.nfit.present && !anyPmemRegion) {
        o.code = code::NoNfit;
        o.severity = Severity::Problem;
        o.summary = "no ACPI NFIT and no pmem region: this machine has no persistent memory";
        o.evidence.push_back(
            {"nfit", facts.nfit.readError.empty() ? "absent" : facts.nfit.readError});
        if (facts.topology.failed())
            o.evidence.push_back({"ndctl", facts.topology.text});
        o.remedy = "give the VM an NVDIMM: qemu -machine nvdimm=on -m ...,slots=N,maxmem=... "
                   "-object memory-backend-file,id=mem1,share=on,mem-path=FILE,size=S "
                   "-device nvdimm,memdev=mem1 (and load the nfit module in the guest); "
                   "libvirt: <memory model='nvdimm'>. Complete examples of both, with the "
                   "agent's channel: /usr/share/doc/daxprobe/examples/";
        return true;
    }
    if (facts.topology.namespaces.empty()) {
        o.code = code::NoPmemNamespace;
        o.severity = Severity::Problem;
        o.summary = anyPmemRegion ? "pmem regions exist but no namespace is active"
                                  : "an NFIT is present but the kernel shows no pmem region";
        o.evidence.push_back(
            {"nfit", fmt::format("{} pmem SPA range(s)", facts.nfit.pmemRangeCount())});
        if (facts.topology.failed())
            o.evidence.push_back({"ndctl", facts.topology.text});
        o.remedy = anyPmemRegion ? "ndctl create-namespace -m fsdax -r region0"
                                 : "modprobe nfit nd_pmem   # then: ndctl list -R";
        return true;
    }
    return false;
}

// The DIMMs against the DAX mounts on their regions; a region a DIMM made
// read-only takes the reconfiguration remedies off what is on it.
void judgeDimmsUnder(const Facts &facts, Report &report)
{
    std::vector<DaxMount> daxMounts, mounts;
    for (const auto &m : report.mounts) {
        if (!m.ns)
            continue;
        bool writable = !mountedReadOnly(*m.mount);
        mounts.push_back({m.ns->region, m.mount->mountPoint, writable});
        if (protocol::daxInEffect(m.verdict.code))
            daxMounts.push_back({m.ns->region, m.mount->mountPoint, writable});
    }
    report.dimms = judgeDimms(facts.topology, daxMounts, mounts, facts.shutdownsSeen);
    for (auto &n : report.namespaces)
        withholdReconfiguration(facts.topology, n.ns, n.verdict);
    for (auto &m : report.mounts)
        withholdReconfiguration(facts.topology, m.ns, m.verdict);
}

// The overall verdict from the namespaces', mounts' and DIMMs' own.
void judgeOverall(Report &report)
{
    Verdict &o = report.overall;
    int problems = 0, dax = 0;
    for (const auto &n : report.namespaces)
        problems += n.verdict.severity == Severity::Problem;
    for (const auto &m : report.mounts) {
        problems += m.verdict.severity == Severity::Problem;
        dax += protocol::daxInEffect(m.verdict.code);
    }
    for (const auto &d : report.dimms)
        problems += d.verdict.severity == Severity::Problem;
    for (const Verdict *v : report.cxl.verdicts())
        problems += v->severity == Severity::Problem;
    if (problems > 0) {
        o.code = code::ProblemsFound;
        o.severity = Severity::Problem;
        o.summary = fmt::format("{} problem(s) found", problems);
        report.exitCode = 1;
    } else {
        o.code = code::DaxVerified;
        o.summary = report.mounts.empty()
                        ? "persistent memory is DAX-capable; nothing is mounted on it"
                        : fmt::format("DAX verified on {} mount(s)", dax);
        report.exitCode = 0;
    }
}

} // namespace

Report evaluate(const Facts &facts)
{
    Report report;
    describeSystem(facts, report);
    report.cxl = judgeCxl(facts);
    for (const auto &ns : facts.topology.namespaces) {
        const DaxDevice *dax = facts.topology.daxDeviceByChardev(ns.chardev);
        std::vector<NamespaceMount> mounts = mountsOf(facts, ns);
        Verdict v = judgeNamespace(ns, dax, mounts);
        judgeMediaErrors(
            ns, {!mounts.empty(), facts.topology.busOf(ns), dax && dax->mode == "system-ram"}, v);
        report.namespaces.push_back({&ns, std::move(v)});
    }
    for (const auto &m : facts.mounts) {
        if (!isDaxCandidate(facts, m))
            continue;
        MountReport mr = describeMount(facts, report, m);
        mr.verdict = judgeMount(mr);
        report.mounts.push_back(std::move(mr));
    }
    judgeDimmsUnder(facts, report);
    systemWarnings(facts, report);

    Verdict &o = report.overall;
    if (!facts.mountsError.empty()) {
        o.code = code::CheckFailed;
        o.severity = Severity::Problem;
        o.summary = "could not read the mount table: " + facts.mountsError;
        report.exitCode = 2;
    } else if (judgeNoPmem(facts, report.cxl, o)) {
        report.exitCode = 1;
    } else {
        judgeOverall(report);
    }
    return report;
}

} // namespace daxprobe
