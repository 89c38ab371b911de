#include "probes/readers/sysfs_topology.h"

#include <algorithm>
#include <cerrno>
#include <tuple>

#include "probes/readers/dax_device.h"
#include "probes/readers/media_errors.h"
#include "probes/readers/text_util.h"

namespace daxprobe
{

namespace
{

// linux/ndctl.h: a region's nstype names the kind of namespace it holds.
constexpr unsigned long long kNamespaceIo = 4;   // label-less ("legacy") pmem
constexpr unsigned long long kNamespacePmem = 5; // labelled pmem
constexpr unsigned long long kNamespaceBlk = 6;

// Every device is read through its bus directory (ndbusN/regionM/...), the
// parent/child layout libndctl walks: one path scheme for a live /sys (the
// links resolve) and a captured tree (plain directories).
const std::string kNdDevices = "sys/bus/nd/devices/";

struct Child {
    std::string name;
    unsigned region = 0;
    unsigned id = 0;
};

// The entries of `dir` named prefix<region>.<id> (or prefix<id> for regions),
// in id order, as ndctl lists them.
std::vector<Child> children(const std::vector<std::string> &entries, const std::string &prefix)
{
    std::vector<Child> out;
    for (const auto &e : entries) {
        Child c{e};
        if (parseNdDeviceName(e, prefix, c.region, c.id))
            out.push_back(std::move(c));
    }
    std::sort(out.begin(), out.end(), [](const Child &a, const Child &b) {
        return std::tie(a.region, a.id) < std::tie(b.region, b.id);
    });
    return out;
}

std::string attr(const Root &root, const std::string &path)
{
    auto v = root.readAttr(path);
    return v ? *v : std::string();
}

std::uint64_t number(const Root &root, const std::string &path)
{
    auto v = root.readUnsigned(path);
    return v ? *v : 0;
}

std::optional<std::uint64_t> optionalNumber(const Root &root, const std::string &path)
{
    auto v = root.readUnsigned(path);
    return v ? std::optional<std::uint64_t>(*v) : std::nullopt;
}

// A size-select attribute lists the sizes it takes and brackets the one in
// use ("512 520 528 [4096] 4104 ..."): that one.
std::uint64_t selected(const Root &root, const std::string &path)
{
    const std::string v = attr(root, path);
    const auto open = v.find('['), close = v.find(']');
    if (open == std::string::npos || close == std::string::npos || close < open)
        return 0;
    return parseU64(v.substr(open + 1, close - open - 1)).value_or(0);
}

// "<sector> <count>" per line: the sum of the counts.
std::uint64_t badblockSum(const Root &root, const std::string &path)
{
    auto text = root.readFile(path, 1 << 20);
    if (!text)
        return 0;
    std::uint64_t total = 0;
    for (auto line : splitLines(*text)) {
        auto f = splitFields(line);
        if (f.size() == 2)
            if (auto n = parseU64(f[1]))
                total += *n;
    }
    return total;
}

// The disk an enabled namespace/pfn/btt exposes: <dev>/block/<disk>. Its
// `dev` attribute is read too, so that a capture records the directory.
std::string blockDevice(const Root &root, const std::string &devPath)
{
    auto disks = root.listDir(devPath + "/block");
    if (!disks)
        return {};
    for (const auto &disk : *disks)
        if (root.readAttr(devPath + "/block/" + disk + "/dev"))
            return disk;
    return {};
}

// The device-dax character device below an enabled nd dax device (libdaxctl's
// daxctl_dev): the first daxN.M child with a non-zero size.
std::string daxCharDevice(const Root &root, const std::string &devPath, bool &enabled)
{
    enabled = false;
    auto entries = root.listDir(devPath);
    if (!entries)
        return {};
    for (const auto &c : children(*entries, "dax")) {
        auto size = root.readUnsigned(devPath + "/" + c.name + "/size");
        if (!size)
            continue;
        enabled = true; // dax_pmem bound: it created the device
        if (*size > 0)
            return c.name;
    }
    return {};
}

const char *mapName(const std::string &location)
{
    if (location == "ram")
        return "mem";
    if (location == "pmem")
        return "dev";
    return "";
}

const char *modeName(const std::string &attr)
{
    // The kernel's namespace mode attribute uses the old names.
    if (attr == "raw")
        return "raw";
    if (attr == "memory" || attr == "fsdax")
        return "fsdax";
    if (attr == "dax" || attr == "devdax")
        return "devdax";
    if (attr == "safe" || attr == "sector")
        return "sector";
    return "unknown";
}

// A claim device (pfn, dax, btt) and the namespace its `namespace`
// attribute names ("" for an idle seed): libndctl's ndctl_namespace_get_pfn.
struct Claim {
    std::string kind; // "pfn", "dax", "btt"
    std::string name;
    std::string ns;
};

std::vector<Claim> readClaims(const Root &root, const std::string &regionPath,
                              const std::vector<std::string> &entries)
{
    std::vector<Claim> out;
    for (const char *kind : {"pfn", "dax", "btt"})
        for (const auto &c : children(entries, kind))
            out.push_back({kind, c.name, attr(root, regionPath + "/" + c.name + "/namespace")});
    return out;
}

// libndctl looks for a pfn claim first, then dax, then btt.
const Claim *claimOf(const std::vector<Claim> &claims, const std::string &ns)
{
    for (const auto &c : claims)
        if (c.ns == ns)
            return &c;
    return nullptr;
}

// One namespace as ndctl list shows it; false when it is idle (a seed, or
// disabled: ndctl list hides those too). "Enabled" is a bound driver, seen
// by what the driver created: the disk, or the device-dax device.
bool readNamespace(const Root &root, const std::string &regionPath, const std::string &region,
                   const std::string &name, const std::vector<Claim> &claims, NdNamespace &ns,
                   std::vector<DaxDevice> &daxDevices)
{
    const std::string path = regionPath + "/" + name;
    ns.dev = name;
    ns.region = region;
    ns.uuid = uuidOrEmpty(attr(root, path + "/uuid")); // labelled namespaces only
    // Every kind of namespace has `mode`; read here (not only when unclaimed)
    // so that a capture records the namespace's directory as well.
    const std::string modeAttr = attr(root, path + "/mode");

    // The personality that is live decides mode and usable size (the
    // capacity after the pfn/dax info block), as in ndctl list.
    const Claim *claim = claimOf(claims, name);
    if (!claim) {
        ns.blockdev = blockDevice(root, path);
        if (ns.blockdev.empty())
            return false;
        ns.mode = modeName(modeAttr);
        if (auto raw = root.readUnsigned(path + "/size")) {
            ns.size = *raw;
            ns.rawSize = *raw;
        }
        ns.dataStart = optionalNumber(root, path + "/resource");
    } else {
        const std::string p = regionPath + "/" + claim->name;
        if (claim->kind == "dax") {
            bool enabled = false;
            ns.chardev = daxCharDevice(root, p, enabled);
            if (!enabled)
                return false;
            if (!ns.chardev.empty()) {
                daxDevices.push_back(readDaxDevice(root, p + "/" + ns.chardev, ns.chardev));
                daxDevices.back().nsDev = name;
            }
        } else {
            ns.blockdev = blockDevice(root, p);
            if (ns.blockdev.empty())
                return false;
        }
        ns.size = number(root, p + "/size");
        // The namespace's whole capacity: size minus it is what the info
        // block and, with map=dev, the struct pages took (struct_pages.h).
        if (auto raw = root.readUnsigned(path + "/size"))
            ns.rawSize = *raw;
        if (claim->kind == "btt") {
            ns.mode = "sector";
            ns.sectorSize = selected(root, p + "/sector_size");
        } else {
            ns.mode = claim->kind == "pfn" ? "fsdax" : "devdax";
            ns.map = mapName(attr(root, p + "/mode"));
            ns.align = number(root, p + "/align");
            ns.dataStart = optionalNumber(root, p + "/resource");
        }
        // ndctl's "uuid" is the claim's; the namespace's own is its raw_uuid.
        // ndctl prints a claim's uuid whatever it is: Kata's DAX header
        // carries an all-zero one (ndctl: 00000000-...).
        if (auto u = attr(root, p + "/uuid"); !u.empty())
            ns.uuid = u;
    }
    readMediaErrors(root, regionPath, claim ? regionPath + "/" + claim->name : path, ns);
    return true;
}

void readRegion(const Root &root, const std::string &busPath, const std::string &bus,
                const Child &child, Topology &topo)
{
    const std::string path = busPath + "/" + child.name;
    NdRegion r;
    r.dev = child.name;
    r.bus = bus;
    std::uint64_t nstype = number(root, path + "/nstype");
    r.type = (nstype == kNamespaceIo || nstype == kNamespacePmem) ? "pmem" : "blk";
    r.size = number(root, path + "/size");
    r.align = number(root, path + "/align");
    // Only label-managed regions have space to hand out (ndctl: 0 otherwise).
    if (nstype == kNamespacePmem || nstype == kNamespaceBlk)
        r.availableSize = number(root, path + "/available_size");
    auto pd = root.readAttr(path + "/persistence_domain");
    r.persistenceDomain = pd ? persistenceDomainName(*pd) : "unknown";
    if (auto node = root.readAttr(path + "/numa_node"))
        if (auto n = parseI64(*node); n && *n >= 0)
            r.numaNode = static_cast<int>(*n);
    r.badblockCount = badblockSum(root, path + "/badblocks");

    auto entries = root.listDir(path);
    if (entries) {
        auto claims = readClaims(root, path, *entries);
        for (const auto &c : children(*entries, "namespace")) {
            NdNamespace ns;
            if (readNamespace(root, path, r.dev, c.name, claims, ns, topo.daxDevices))
                topo.namespaces.push_back(std::move(ns));
        }
    }
    topo.regions.push_back(std::move(r));
}

} // namespace

bool parseNdDeviceName(const std::string &name, const std::string &prefix, unsigned &region,
                       unsigned &id)
{
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0)
        return false;
    std::string_view rest(name);
    rest.remove_prefix(prefix.size());
    auto dot = rest.find('.');
    auto first = parseU64(rest.substr(0, dot));
    if (!first || *first > 0xffffffffULL)
        return false;
    if (dot == std::string_view::npos) {
        region = 0;
        id = static_cast<unsigned>(*first);
        return true;
    }
    auto second = parseU64(rest.substr(dot + 1));
    if (!second || *second > 0xffffffffULL)
        return false;
    region = static_cast<unsigned>(*first);
    id = static_cast<unsigned>(*second);
    return true;
}

const char *persistenceDomainName(const std::string &attr)
{
    // libndctl compares prefixes; an empty attribute (QEMU's NFIT sets no
    // flags, virtio-pmem) is "unknown".
    for (const char *name : {"cpu_cache", "memory_controller", "none"})
        if (attr.rfind(name, 0) == 0)
            return name;
    return "unknown";
}

std::string uuidOrEmpty(const std::string &attr)
{
    bool allZero =
        std::all_of(attr.begin(), attr.end(), [](char c) { return c == '0' || c == '-'; });
    return allZero ? std::string() : attr;
}

Topology readTopologyFromSysfs(const Root &root)
{
    Topology topo;
    auto devices = root.listDir(kNdDevices);
    if (!devices) {
        // No nd bus registered: nothing to list, as ndctl says.
        if (devices.error().code == ENOENT) {
            topo.observe();
            return topo;
        }
        topo.fail(devices.error().describe());
        return topo;
    }
    topo.observe();
    for (const auto &b : children(*devices, "ndbus")) {
        const std::string busPath = kNdDevices + b.name;
        // Reading wait_probe waits for asynchronous probing to finish (as
        // libndctl does before it trusts "enabled"), so a namespace created a
        // moment ago is not reported idle.
        (void)root.readAttr(busPath + "/wait_probe");
        topo.buses.push_back(
            {b.name, attr(root, busPath + "/provider"), attr(root, busPath + "/commands")});
        auto entries = root.listDir(busPath);
        if (!entries)
            continue;
        std::vector<std::string> regions, nmems;
        for (const auto &r : children(*entries, "region")) {
            readRegion(root, busPath, b.name, r, topo);
            regions.push_back(r.name);
        }
        for (const auto &n : children(*entries, "nmem"))
            nmems.push_back(n.name);
        auto dimms = readDimms(root, busPath, b.name, regions, nmems);
        topo.dimms.insert(topo.dimms.end(), dimms.begin(), dimms.end());
    }
    return topo;
}

} // namespace daxprobe
