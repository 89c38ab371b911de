#include "agent/daemon/agent_metrics.h"

#include <vector>

#include "base/root.h"
#include "probes/readers/meminfo.h"
#include "probes/readers/vmstat.h"

namespace daxprobe
{

namespace
{

// Copies the named counters that exist; a kernel without THP has no thp_*.
template <typename Map, typename Names>
void pick(nlohmann::json &out, const Map &values, const Names &names)
{
    for (const auto &name : names)
        if (auto it = values.find(name); it != values.end())
            out[name] = it->second;
}

} // namespace

nlohmann::json collectMetrics(const std::string &rootDir)
{
    nlohmann::json out = {{"meminfo", nlohmann::json::object()},
                          {"vmstat", nlohmann::json::object()},
                          {"errors", nlohmann::json::array()}};
    auto root = Root::open(rootDir);
    if (!root) {
        out["errors"].push_back(root.error().describe());
        return out;
    }
    static const std::vector<std::string> meminfoNames = {"MemTotal", "MemAvailable", "Cached",
                                                          "Buffers",  "Shmem",        "Mapped",
                                                          "Dirty",    "Writeback",    "AnonPages"};
    if (auto m = root->readFile("proc/meminfo").and_then(parseMeminfo))
        pick(out["meminfo"], *m, meminfoNames);
    else
        out["errors"].push_back(m.error().describe());
    if (auto v = root->readFile("proc/vmstat").and_then(parseVmstat))
        pick(out["vmstat"], *v, vmstatFaultCounters());
    else
        out["errors"].push_back(v.error().describe());
    return out;
}

} // namespace daxprobe
