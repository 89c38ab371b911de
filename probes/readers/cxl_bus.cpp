#include "probes/readers/cxl_bus.h"

#include <cerrno>
#include <charconv>

#include "probes/readers/text_util.h"

namespace daxprobe
{

namespace
{

constexpr const char *kDevices = "sys/bus/cxl/devices";
// Bounds against a hostile or looping tree (a fixture, or a symlink cycle
// under a confined root): real hierarchies are a few levels deep.
constexpr unsigned kMaxDepth = 8;
constexpr std::size_t kMaxEntries = 4096;

bool digits(std::string_view s)
{
    if (s.empty())
        return false;
    for (char c : s)
        if (c < '0' || c > '9')
            return false;
    return true;
}

// "port12" for prefix "port": the prefix, then digits only.
bool named(std::string_view name, std::string_view prefix)
{
    return name.size() > prefix.size() && name.substr(0, prefix.size()) == prefix &&
           digits(name.substr(prefix.size()));
}

// decoderX.Y
bool decoderName(std::string_view name)
{
    auto dot = name.find('.');
    return dot != std::string_view::npos && named(name.substr(0, dot), "decoder") &&
           digits(name.substr(dot + 1));
}

// "cxl/mem0" -> "mem0"
std::string baseName(std::string_view path)
{
    auto slash = path.rfind('/');
    return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

// The cxl attributes print sizes and addresses "%#llx", counts "%d".
std::optional<std::uint64_t> u64(const Root &root, const std::string &path)
{
    auto text = root.readAttr(path);
    if (!text)
        return std::nullopt;
    std::string_view s = trim(*text);
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        std::uint64_t v = 0;
        auto [end, ec] = std::from_chars(s.data() + 2, s.data() + s.size(), v, 16);
        if (ec != std::errc() || end != s.data() + s.size())
            return std::nullopt;
        return v;
    }
    return parseU64(s);
}

std::optional<unsigned> small(const Root &root, const std::string &path)
{
    auto v = u64(root, path);
    if (!v || *v > 0xffffffffULL)
        return std::nullopt;
    return static_cast<unsigned>(*v);
}

std::string attr(const Root &root, const std::string &path)
{
    auto text = root.readAttr(path);
    return text ? std::string(trim(*text)) : std::string();
}

// KEY=value from a device's uevent.
std::string ueventField(const Root &root, const std::string &dir, std::string_view key)
{
    auto text = root.readAttr(dir + "/uevent");
    if (!text)
        return {};
    for (auto line : splitLines(*text))
        if (line.size() > key.size() && line.substr(0, key.size()) == key &&
            line[key.size()] == '=')
            return std::string(line.substr(key.size() + 1));
    return {};
}

CxlMemdev readMemdev(const Root &root, const std::string &name)
{
    const std::string dir = std::string(kDevices) + "/" + name;
    CxlMemdev m;
    m.dev = name;
    m.serial = u64(root, dir + "/serial");
    m.pmemSize = u64(root, dir + "/pmem/size").value_or(0);
    m.ramSize = u64(root, dir + "/ram/size").value_or(0);
    return m;
}

// The host bridge's _UID: its uport is the ACPI0016 device, or (newer
// kernels) the PCI host bridge whose firmware node that device is.
std::optional<std::uint32_t> hostBridgeUid(const Root &root, const std::string &dir)
{
    for (const char *p : {"/uport/uid", "/uport/firmware_node/uid"}) {
        auto v = u64(root, dir + p);
        if (v && *v <= 0xffffffffULL)
            return static_cast<std::uint32_t>(*v);
    }
    return std::nullopt;
}

struct Walk {
    const Root &root;
    CxlBus &bus;
    std::size_t entries = 0;

    void decoder(const std::string &dir, const std::string &name, const CxlPort &owner);
    void region(const std::string &dir, const std::string &name, const std::string &rootDecoder);
    void bridge(const std::string &dir, const std::string &name);
    void port(const std::string &dir, const std::string &name, const std::string &parent,
              unsigned depth);
};

void Walk::decoder(const std::string &dir, const std::string &name, const CxlPort &owner)
{
    CxlDecoder d;
    d.dev = name;
    d.port = owner.dev;
    d.kind = owner.kind;
    d.start = u64(root, dir + "/start");
    d.size = u64(root, dir + "/size");
    d.interleaveWays = small(root, dir + "/interleave_ways");
    const std::string targets = attr(root, dir + "/target_list");
    for (auto t : splitFields(targets, ','))
        if (!trim(t).empty())
            d.targets.emplace_back(trim(t));
    if (owner.kind == "root") {
        d.capPmem = u64(root, dir + "/cap_pmem").value_or(0) != 0;
        d.capRam = u64(root, dir + "/cap_ram").value_or(0) != 0;
    } else {
        d.region = attr(root, dir + "/region");
    }
    if (owner.kind == "endpoint") {
        d.mode = attr(root, dir + "/mode");
        d.dpaSize = u64(root, dir + "/dpa_size");
    }
    bus.decoders.push_back(std::move(d));
    if (owner.kind != "root")
        return;
    // A region is a child of the root decoder whose window it uses.
    auto names = root.listDir(dir);
    for (const auto &n : names ? *names : std::vector<std::string>{})
        if (named(n, "region") && ++entries <= kMaxEntries)
            region(dir + "/" + n, n, name);
}

void Walk::region(const std::string &dir, const std::string &name, const std::string &rootDecoder)
{
    CxlRegion r;
    r.dev = name;
    r.rootDecoder = rootDecoder;
    r.type = attr(root, dir + "/mode"); // since 6.3; 6.1's regions: see readCxlBus
    r.resource = u64(root, dir + "/resource");
    r.size = u64(root, dir + "/size");
    r.interleaveWays = small(root, dir + "/interleave_ways");
    r.granularity = small(root, dir + "/interleave_granularity");
    if (auto c = u64(root, dir + "/commit"))
        r.committed = *c != 0;
    for (unsigned i = 0; i < r.interleaveWays.value_or(0) && i < 16; ++i) {
        std::string t = attr(root, dir + "/target" + std::to_string(i));
        if (!t.empty())
            r.targets.push_back(std::move(t));
    }
    bus.regions.push_back(std::move(r));
}

void Walk::bridge(const std::string &dir, const std::string &name)
{
    CxlNvdimmBridge b{name, {}};
    auto names = root.listDir(dir);
    for (const auto &n : names ? *names : std::vector<std::string>{})
        if (named(n, "ndbus") && root.readAttr(dir + "/" + n + "/provider"))
            b.ndBus = n; // read through it, so a capture keeps it
    bus.bridges.push_back(std::move(b));
}

void Walk::port(const std::string &dir, const std::string &name, const std::string &parent,
                unsigned depth)
{
    CxlPort p;
    p.dev = name;
    p.parent = parent;
    p.kind = named(name, "root") ? "root" : named(name, "endpoint") ? "endpoint" : "switch";
    if (p.kind == "endpoint")
        p.memdev = baseName(ueventField(root, dir + "/uport", "DEVNAME"));
    const CxlPort *above = parent.empty() ? nullptr : bus.port(parent);
    if (p.kind == "switch" && above && above->kind == "root")
        p.uid = hostBridgeUid(root, dir);
    p.decodersCommitted = small(root, dir + "/decoders_committed");
    auto names = root.listDir(dir);
    std::vector<std::string> children = names ? *names : std::vector<std::string>{};
    for (const auto &n : children)
        if (named(n, "dport") && ++entries <= kMaxEntries) {
            auto id = parseU64(std::string_view(n).substr(5));
            if (id && *id <= 0xffffffffULL)
                p.dports.push_back({static_cast<unsigned>(*id),
                                    ueventField(root, dir + "/" + n, "PCI_SLOT_NAME")});
        }
    bus.ports.push_back(p);
    for (const auto &n : children) {
        if (++entries > kMaxEntries)
            return;
        std::string sub = dir + "/" + n;
        if (decoderName(n))
            decoder(sub, n, p);
        else if (named(n, "nvdimm-bridge"))
            bridge(sub, n);
        else if (depth < kMaxDepth && (named(n, "port") || named(n, "endpoint")))
            port(sub, n, name, depth + 1);
    }
}

// 6.1 has no region mode attribute: it made pmem regions only, and its
// endpoint decoders say which mode they decode.
void regionTypeFromDecoders(CxlBus &bus)
{
    for (auto &r : bus.regions)
        if (r.type.empty() && !r.targets.empty())
            if (const CxlDecoder *d = bus.decoder(r.targets.front()))
                r.type = d->mode;
}

void linkEndpoints(CxlBus &bus)
{
    for (auto &m : bus.memdevs)
        for (const auto &p : bus.ports)
            if (p.kind == "endpoint" && p.memdev == m.dev)
                m.endpoint = p.dev;
}

} // namespace

const CxlPort *CxlBus::port(const std::string &dev) const
{
    for (const auto &p : ports)
        if (p.dev == dev)
            return &p;
    return nullptr;
}

const CxlDecoder *CxlBus::decoder(const std::string &dev) const
{
    for (const auto &d : decoders)
        if (d.dev == dev)
            return &d;
    return nullptr;
}

CxlBus readCxlBus(const Root &root)
{
    CxlBus bus;
    auto names = root.listDir(kDevices);
    if (!names) {
        if (names.error().code == ENOENT)
            bus.observe("no CXL bus");
        else
            bus.fail(names.error().describe());
        return bus;
    }
    bus.observe();
    Walk walk{root, bus};
    for (const auto &n : *names) {
        if (++walk.entries > kMaxEntries)
            break;
        if (named(n, "mem"))
            bus.memdevs.push_back(readMemdev(root, n));
        else if (named(n, "root"))
            walk.port(std::string(kDevices) + "/" + n, n, "", 0);
    }
    regionTypeFromDecoders(bus);
    linkEndpoints(bus);
    return bus;
}

} // namespace daxprobe
