#include "probes/capture/live_json.h"

#include <map>
#include <string>

namespace daxprobe
{

namespace
{

using json = nlohmann::json;

enum class Kind { String, Bool, Unsigned, Integer, Object, Array };

const char *kindName(Kind k)
{
    switch (k) {
    case Kind::String:
        return "a string";
    case Kind::Bool:
        return "a boolean";
    case Kind::Unsigned:
        return "a non-negative integer";
    case Kind::Integer:
        return "an integer";
    case Kind::Object:
        return "an object";
    case Kind::Array:
        return "an array";
    }
    return "?";
}

bool matches(const json &v, Kind k)
{
    switch (k) {
    case Kind::String:
        return v.is_string();
    case Kind::Bool:
        return v.is_boolean();
    case Kind::Unsigned:
        return v.is_number_unsigned();
    case Kind::Integer:
        return v.is_number_integer();
    case Kind::Object:
        return v.is_object();
    case Kind::Array:
        return v.is_array();
    }
    return false;
}

// Field names mean one thing wherever they appear in live.json (as in
// ndctl's JSON), so one table types them all.
const std::map<std::string, Kind, std::less<>> &fieldKinds()
{
    static const std::map<std::string, Kind, std::less<>> kinds = {
        {"available", Kind::Bool},
        {"error", Kind::String},
        {"dev", Kind::String},
        {"provider", Kind::String},
        {"commands", Kind::String},
        {"bad_ranges", Kind::Array},
        {"bus", Kind::String},
        {"type", Kind::String},
        {"size", Kind::Unsigned},
        {"soname", Kind::String},
        {"leaves_unknown", Kind::String},
        {"missing_libraries", Kind::Array},
        {"raw_size", Kind::Unsigned},
        {"align", Kind::Unsigned},
        {"available_size", Kind::Unsigned},
        {"persistence_domain", Kind::String},
        {"numa_node", Kind::Integer},
        {"badblock_count", Kind::Unsigned},
        {"region", Kind::String},
        {"mode", Kind::String},
        {"map", Kind::String},
        {"uuid", Kind::String},
        {"blockdev", Kind::String},
        {"chardev", Kind::String},
        {"namespace", Kind::String},
        {"target_node", Kind::Integer},
        {"state", Kind::String},
        {"online_memblocks", Kind::Unsigned},
        {"total_memblocks", Kind::Unsigned},
        {"movable", Kind::Bool},
        {"ran", Kind::Bool},
        {"file", Kind::String},
        {"dax", Kind::Bool},
        {"dax_known", Kind::Bool},
        {"attributes", Kind::Unsigned},
        {"attributes_mask", Kind::Unsigned},
        {"skipped", Kind::String},
        {"ok", Kind::Bool},
        {"is_pmem", Kind::Bool},
        {"path", Kind::String},
        {"method", Kind::String},
        {"reason", Kind::String},
        {"resident_bytes", Kind::Unsigned},
        {"dirty_bytes", Kind::Unsigned},
        {"usable", Kind::Bool},
        {"id", Kind::String},
        {"handle", Kind::Unsigned},
        {"dirty_shutdown", Kind::Unsigned},
        {"read_only", Kind::Bool},
        {"statx", Kind::Object},
        {"map_sync", Kind::Object},
        {"residency", Kind::Object},
        {"disk", Kind::String},
        {"start_sector", Kind::Unsigned},
        {"sectors", Kind::Unsigned},
        {"sector", Kind::Unsigned},
        {"count", Kind::Unsigned},
        {"offset", Kind::Unsigned},
        {"length", Kind::Unsigned},
        {"files_scanned", Kind::Unsigned},
        {"stopped_early", Kind::String},
        {"clears_poison", Kind::Bool},
        {"fsmap_note", Kind::String},
        {"owner", Kind::String},
        {"fmr_physical", Kind::Unsigned},
        {"fmr_length", Kind::Unsigned},
        {"fmr_owner", Kind::Unsigned},
        {"fmr_offset", Kind::Unsigned},
        {"fmr_flags", Kind::Unsigned},
        {"census", Kind::Object},
        {"files_examined", Kind::Unsigned},
        {"files_seen", Kind::Unsigned},
        {"sampled", Kind::String},
        {"dax_files", Kind::Unsigned},
        {"inline_tail", Kind::Unsigned},
        {"compressed", Kind::Unsigned},
        {"unknown_reason", Kind::Unsigned},
    };
    return kinds;
}

Result<void> expect(const json &v, Kind k, const std::string &where)
{
    if (!matches(v, k))
        return failf(0, "live.json: {} must be {}, not {}", where, kindName(k), v.type_name());
    return {};
}

// An object of leaf fields (and the statx/map_sync/residency objects).
Result<void> checkRecord(const json &v, const std::string &where)
{
    if (auto r = expect(v, Kind::Object, where); !r)
        return r;
    const auto &kinds = fieldKinds();
    for (const auto &[key, value] : v.items()) {
        auto it = kinds.find(key);
        if (it == kinds.end())
            continue;
        std::string at = where + "." + key;
        if (auto r = expect(value, it->second, at); !r)
            return r;
        if (it->second == Kind::Object)
            if (auto r = checkRecord(value, at); !r)
                return r;
    }
    return {};
}

Result<void> checkList(const json &parent, const char *key, const std::string &where)
{
    auto it = parent.find(key);
    if (it == parent.end())
        return {};
    std::string at = where.empty() ? std::string(key) : where + "." + key;
    if (auto r = expect(*it, Kind::Array, at); !r)
        return r;
    for (std::size_t i = 0; i < it->size(); ++i)
        if (auto r = checkRecord((*it)[i], at + "[" + std::to_string(i) + "]"); !r)
            return r;
    return {};
}

} // namespace

Result<void> validateLiveJson(const json &j)
{
    if (auto r = expect(j, Kind::Object, "the top level"); !r)
        return r;
    if (auto it = j.find("topology"); it != j.end()) {
        if (auto r = checkRecord(*it, "topology"); !r)
            return r;
        for (const char *list : {"buses", "regions", "namespaces", "dax_devices", "dimms"})
            if (auto r = checkList(*it, list, "topology"); !r)
                return r;
        if (auto d = it->find("dimms"); d != it->end())
            for (std::size_t i = 0; i < d->size(); ++i)
                if (auto r =
                        checkList((*d)[i], "regions", "topology.dimms[" + std::to_string(i) + "]");
                    !r)
                    return r;
        if (auto n = it->find("namespaces"); n != it->end())
            for (std::size_t i = 0; i < n->size(); ++i)
                if (auto r = checkList((*n)[i], "bad_ranges",
                                       "topology.namespaces[" + std::to_string(i) + "]");
                    !r)
                    return r;
    }
    if (auto it = j.find("mounts"); it != j.end()) {
        if (auto r = expect(*it, Kind::Object, "mounts"); !r)
            return r;
        for (const auto &[mp, v] : it->items()) {
            std::string at = "mounts[\"" + mp + "\"]";
            if (auto r = checkRecord(v, at); !r)
                return r;
            if (auto c = v.find("census"); c != v.end())
                if (auto r = checkList(*c, "exceptions", at + ".census"); !r)
                    return r;
        }
    }
    if (auto r = checkList(j, "files", ""); !r)
        return r;
    if (auto r = checkList(j, "missing_libraries", ""); !r)
        return r;
    if (auto it = j.find("badblocks"); it != j.end()) {
        if (auto r = expect(*it, Kind::Object, "badblocks"); !r)
            return r;
        for (const auto &[mp, v] : it->items()) {
            std::string at = "badblocks[\"" + mp + "\"]";
            if (auto r = checkRecord(v, at); !r)
                return r;
            for (const char *list : {"ranges", "extents", "special", "fsmap"})
                if (auto r = checkList(v, list, at); !r)
                    return r;
        }
    }
    if (auto it = j.find("perf"); it != j.end())
        if (auto r = checkRecord(*it, "perf"); !r)
            return r;
    return {};
}

} // namespace daxprobe
