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

void readBlockdevs(const Root &root, Facts &facts)
{
    std::set<std::string> names;
    for (const auto &ns : facts.topology.namespaces)
        if (!ns.blockdev.empty())
            names.insert(ns.blockdev);
    for (const auto &m : facts.mounts) {
        std::string dev = deviceName(m.source);
        if (!dev.empty() && dev.find('/') == std::string::npos)
            names.insert(dev);
    }
    for (const auto &name : names) {
        auto number = readBlockDevNumber(root, name);
        if (!number)
            continue;
        BlockDevFacts b{name, number->first, number->second, readQueueDax(root, name)};
        facts.blockdevs.push_back(std::move(b));
    }
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
        return isPmemName(b->name) || facts.topology.namespaceByBlockdev(b->name);
    return isPmemName(deviceName(mount.source));
}

void readRootFacts(const Root &root, Facts &facts, KmsgReader *kmsg, FaultProbeCache *faultProbes)
{
    if (auto r = root.readAttr("proc/sys/kernel/osrelease"))
        facts.kernelRelease = *r;

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
