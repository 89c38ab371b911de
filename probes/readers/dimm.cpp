#include "probes/readers/dimm.h"

#include <algorithm>
#include <charconv>
#include <map>

#include "probes/readers/text_util.h"

namespace daxprobe
{

bool NdDimm::hasFlag(const std::string &flag) const
{
    return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

std::string dimmKey(const NdDimm &d)
{
    return d.id.empty() ? d.dev : d.id;
}

namespace
{

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
                              const std::vector<std::string> &regions,
                              const std::vector<std::string> &nmems)
{
    std::map<std::string, std::vector<DimmRegion>> backs;
    for (const auto &region : regions) {
        const std::string path = busPath + "/" + region;
        auto ro = root.readUnsigned(path + "/read_only");
        for (const auto &dimm : regionDimms(root, path))
            backs[dimm].push_back({region, ro && *ro != 0});
    }
    std::vector<NdDimm> out;
    for (const auto &name : nmems) {
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
