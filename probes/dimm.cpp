#include "probes/dimm.h"

#include <algorithm>
#include <charconv>
#include <map>

#include "probes/sysfs_topology.h"
#include "probes/text_util.h"

namespace daxprobe
{

bool NdDimm::hasFlag(const std::string &flag) const
{
    return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

void to_json(nlohmann::json &j, const DimmRegion &r)
{
    j = {{"region", r.region}, {"read_only", r.readOnly}};
}

void from_json(const nlohmann::json &j, DimmRegion &r)
{
    r.region = j.value("region", "");
    r.readOnly = j.value("read_only", false);
}

void to_json(nlohmann::json &j, const NdDimm &d)
{
    j = {{"dev", d.dev}, {"bus", d.bus}, {"flags", d.flags}, {"regions", d.regions}};
    if (!d.id.empty())
        j["id"] = d.id;
    if (d.handle)
        j["handle"] = *d.handle;
    if (d.dirtyShutdown)
        j["dirty_shutdown"] = *d.dirtyShutdown;
}

void from_json(const nlohmann::json &j, NdDimm &d)
{
    d.dev = j.value("dev", "");
    d.bus = j.value("bus", "");
    d.id = j.value("id", "");
    if (auto it = j.find("handle"); it != j.end() && it->is_number_unsigned())
        d.handle = it->get<std::uint32_t>();
    if (auto it = j.find("dirty_shutdown"); it != j.end() && it->is_number_unsigned())
        d.dirtyShutdown = it->get<std::uint64_t>();
    if (auto it = j.find("flags"); it != j.end() && it->is_array())
        for (const auto &f : *it)
            if (f.is_string())
                d.flags.push_back(f.get<std::string>());
    if (auto it = j.find("regions"); it != j.end() && it->is_array())
        for (const auto &r : *it)
            if (r.is_object())
                d.regions.push_back(r.get<DimmRegion>());
}

namespace
{

// Names `prefix<N>` in N order.
std::vector<std::string> numbered(const std::vector<std::string> &entries, const char *prefix)
{
    std::vector<std::pair<unsigned, std::string>> found;
    for (const auto &e : entries) {
        unsigned unused = 0, id = 0;
        if (e.find('.') == std::string::npos && parseNdDeviceName(e, prefix, unused, id))
            found.emplace_back(id, e);
    }
    std::sort(found.begin(), found.end());
    std::vector<std::string> out;
    for (auto &[id, name] : found)
        out.push_back(std::move(name));
    return out;
}

// regionN/mappingK: "nmemX,offset,length,position"; the DIMMs a region spans.
std::vector<std::string> regionDimms(const Root &root, const std::string &regionPath)
{
    std::vector<std::string> out;
    auto count = root.readUnsigned(regionPath + "/mappings");
    for (unsigned long long k = 0; count && k < *count; ++k) {
        auto m = root.readAttr(regionPath + "/mapping" + std::to_string(k));
        if (!m)
            continue;
        auto fields = splitFields(*m, ',');
        if (!fields.empty())
            out.emplace_back(fields[0]);
    }
    return out;
}

// nfit/handle is written "%#x".
std::optional<std::uint32_t> parseHandle(std::string_view s)
{
    if (s.size() < 3 || s.substr(0, 2) != "0x")
        return std::nullopt;
    std::uint32_t v = 0;
    auto [end, ec] = std::from_chars(s.data() + 2, s.data() + s.size(), v, 16);
    if (ec != std::errc() || end != s.data() + s.size())
        return std::nullopt;
    return v;
}

} // namespace

std::vector<NdDimm> readDimms(const Root &root, const std::string &busPath, const std::string &bus,
                              const std::vector<std::string> &entries)
{
    std::map<std::string, std::vector<DimmRegion>> backs;
    for (const auto &region : numbered(entries, "region")) {
        const std::string path = busPath + "/" + region;
        auto ro = root.readUnsigned(path + "/read_only");
        for (const auto &dimm : regionDimms(root, path))
            backs[dimm].push_back({region, ro && *ro != 0});
    }
    std::vector<NdDimm> out;
    for (const auto &name : numbered(entries, "nmem")) {
        const std::string nfit = busPath + "/" + name + "/nfit";
        NdDimm d;
        d.dev = name;
        d.bus = bus;
        if (auto id = root.readAttr(nfit + "/id"))
            d.id = *id;
        if (auto h = root.readAttr(nfit + "/handle"))
            d.handle = parseHandle(*h);
        if (auto f = root.readAttr(nfit + "/flags"))
            for (auto w : splitFields(*f))
                if (!w.empty())
                    d.flags.emplace_back(w);
        // Absent unless the DIMM reports a valid count (an Intel-family DSM).
        if (auto ds = root.readAttr(nfit + "/dirty_shutdown"))
            d.dirtyShutdown = parseU64(*ds);
        d.regions = backs[name];
        out.push_back(std::move(d));
    }
    return out;
}

} // namespace daxprobe
