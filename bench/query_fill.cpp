// query_fill: a collector store holding ROWS reports of VMS VMs (ROWS/VMS
// each, the newest last), written through the collector's own Store in
// batches, for timing `daxprobe-collector query` against it.
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "collector/store.h"

using namespace daxprobe;
using namespace daxprobe::collector;

int main(int argc, char **argv)
{
    std::string db, reportFile;
    std::uint64_t rows = 10000, vms = 1000;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string k = argv[i], v = argv[i + 1];
        if (k == "--db")
            db = v;
        else if (k == "--report")
            reportFile = v;
        else if (k == "--rows")
            rows = std::stoull(v);
        else if (k == "--vms")
            vms = std::stoull(v);
    }
    if (db.empty() || reportFile.empty() || vms == 0) {
        fmt::print(stderr,
                   "usage: query_fill --db PATH --report CHECK.json [--rows N] [--vms N]\n");
        return 2;
    }
    std::ifstream in(reportFile);
    std::stringstream ss;
    ss << in.rdbuf();
    protocol::ReportEnvelope r{"5eed",
                               0,
                               "interval",
                               nlohmann::json::parse(ss.str(), nullptr, false),
                               {{"meminfo", {{"Cached", 1}}}},
                               0};
    if (r.report.is_discarded())
        return 2;
    auto s = Store::open(db, StoreOptions{rows, std::size_t(1) << 40});
    if (!s) {
        fmt::print(stderr, "query_fill: {}\n", s.error().describe());
        return 1;
    }
    std::vector<std::string> names;
    for (std::uint64_t v = 0; v < vms; ++v)
        names.push_back(fmt::format("g{:04}", v));
    std::vector<BatchEntry> envs(vms, BatchEntry{protocol::recordOf(r)});
    std::vector<ChannelReports> batch;
    for (std::uint64_t v = 0; v < vms; ++v)
        batch.push_back({&names[v], std::span(&envs[v], 1)});
    for (std::uint64_t seq = 1; seq * vms <= rows; ++seq) {
        for (auto &e : envs)
            e.record.seq = seq;
        if (auto ok = s->addReports(batch, 1796000000 + std::int64_t(seq)); !ok) {
            fmt::print(stderr, "query_fill: {}\n", ok.error().describe());
            return 1;
        }
    }
    fmt::print("{{\"rows\": {}, \"vms\": {}}}\n", rows / vms * vms, vms);
    return 0;
}
