#include "probes/readers/root_facts.h"

#include <cerrno>
#include <set>

#include "probes/readers/blockdev.h"
#include "probes/readers/text_util.h"

namespace daxprobe
{

namespace
{

std::string deviceName(const std::string &source)
{
    if (source.rfind("/dev/", 0) != 0)
        return {};
    return source.substr(5);
}

bool isPmemName(const std::string &name)
{
    return name.rfind("pmem", 0) == 0;
}

// A container host can have thousands of mounts; they share a few devices.
constexpr std::size_t kMaxBlockdevs = 4096;

void addBlockdev(Facts &facts, BlockDevFacts b)
{
    if (facts.blockdevs.size() < kMaxBlockdevs && !facts.blockdevByNumber(b.major, b.minor))
        facts.blockdevs.push_back(std::move(b));
}

// Each mount's device by the number mountinfo gives it: the kernel's own root
// is "/dev/root", a node that does not exist, and a source can be UUID=...,
// a /dev/mapper link or any text a bind mount carries. Then every
// namespace's disk, mounted or not.
void readBlockdevs(const Root &root, Facts &facts)
{
    std::set<std::pair<unsigned, unsigned>> numbers;
    for (const auto &m : facts.mounts)
        if (m.major != 0) // 0: no block device (tmpfs, proc, overlay, NFS)
            numbers.insert({m.major, m.minor});
    for (const auto &[major, minor] : numbers) {
        if (facts.blockdevs.size() >= kMaxBlockdevs)
            break;
        if (auto b = readBlockDevByNumber(root, major, minor))
            addBlockdev(facts, std::move(*b));
    }
    std::set<std::string> names;
    for (const auto &ns : facts.topology.namespaces)
        if (!ns.blockdev.empty())
            names.insert(ns.blockdev);
    // Captures made before /sys/dev/block was read know a mount's device by
    // its /dev/NAME source only.
    for (const auto &m : facts.mounts)
        if (!facts.blockdevByNumber(m.major, m.minor))
            if (std::string dev = deviceName(m.source); !dev.empty())
                names.insert(dev);
    for (const auto &name : names)
        if (auto b = readDisk(root, name))
            addBlockdev(facts, std::move(*b));
}

// The CEDT (root only, like every ACPI table) and /sys/bus/cxl.
void readCxl(const Root &root, Facts &facts)
{
    if (auto bytes = root.readFile("sys/firmware/acpi/tables/CEDT", 1 << 20)) {
        facts.cedt = parseCedt(*bytes);
    } else if (bytes.error().code != ENOENT) {
        facts.cedt.exists = true;
        facts.cedt.readError = bytes.error().describe();
    }
    facts.cxl = readCxlBus(root);
}

} // namespace

bool isDaxCandidate(const Facts &facts, const MountEntry &mount)
{
    if (daxOption(mount) != DaxOption::None || mount.fstype == "virtiofs")
        return true;
    if (const BlockDevFacts *b = facts.blockdevByNumber(mount.major, mount.minor))
        return isPmemName(b->disk()) || facts.topology.namespaceByBlockdev(b->disk());
    return isPmemName(deviceName(mount.source));
}

void readRootFacts(const Root &root, Facts &facts, KmsgReader *kmsg, FaultProbeCache *faultProbes)
{
    if (auto r = root.readAttr("proc/sys/kernel/osrelease"))
        facts.kernelRelease = *r;
    if (auto c = root.readFile("proc/cmdline", 64 << 10))
        facts.kernelCmdline = std::string(trim(*c));

    if (auto bytes = root.readFile("sys/firmware/acpi/tables/NFIT", 1 << 20)) {
        facts.nfit = parseNfit(*bytes);
    } else {
        facts.nfit.present = false;
        facts.nfit.readError = bytes.error().describe();
    }

    readCxl(root, facts);

    storeOrDescribe(root.readFile("proc/self/mountinfo", 16 << 20).and_then(parseMountinfo),
                    facts.mounts, facts.mountsError);
    readBlockdevs(root, facts);
    storeOrDescribe(root.readFile("proc/meminfo").and_then(parseMeminfo), facts.meminfo,
                    facts.meminfoError);

    // The agent keeps the log open and reads only what is new (kmsg.h).
    facts.kmsg = kmsg ? kmsg->read(root) : readKmsg(root);
    // perf availability is a live fact (set by the caller or a capture's
    // live.json); keep it.
    PerfAvailability perf = facts.faults.perf;
    facts.faults = readFaultFacts(root, false, faultProbes);
    facts.faults.perf = perf;
}

} // namespace daxprobe
