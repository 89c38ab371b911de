#include "query.h"

#include <ctime>

#include <fmt/format.h>

namespace daxprobe::collector
{

using nlohmann::json;

namespace
{

std::string isoTime(std::int64_t t)
{
    if (t <= 0)
        return "-";
    time_t tt = static_cast<time_t>(t);
    tm tmv{};
    gmtime_r(&tt, &tmv);
    char buf[32];
    strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tmv);
    return buf;
}

std::string orDash(const std::string &s)
{
    return s.empty() ? "-" : s;
}

} // namespace

json latestJson(const std::vector<VmState> &vms)
{
    json out = json::array();
    for (const auto &v : vms)
        out.push_back({{"vm", v.vm},
                       {"socket", v.socket},
                       {"machine_id", v.machineId},
                       {"hostname", v.hostname},
                       {"agent_version", v.agentVersion},
                       {"verdict", v.verdict},
                       {"stream", v.stream},
                       {"seq", v.seq},
                       {"reports_stored", v.reportCount},
                       {"agent_dropped_reports", v.droppedReports},
                       {"last_report", isoTime(v.lastReportAt)},
                       {"last_seen", isoTime(v.lastSeenAt)},
                       {"host", v.hostFacts}});
    return {{"schema", "daxprobe.collector.latest/1"}, {"vms", out}};
}

std::string latestTable(const std::vector<VmState> &vms)
{
    std::string out = fmt::format("{:<24} {:<20} {:<20} {:>7} {:>8} {}\n", "VM", "HOSTNAME",
                                  "VERDICT", "SEQ", "REPORTS", "LAST REPORT");
    for (const auto &v : vms)
        out += fmt::format("{:<24} {:<20} {:<20} {:>7} {:>8} {}\n", v.vm, orDash(v.hostname),
                           orDash(v.verdict), v.seq, v.reportCount, isoTime(v.lastReportAt));
    return out;
}

json historyJson(const std::string &vm, const std::vector<StoredReport> &reports)
{
    json out = json::array();
    for (const auto &r : reports)
        out.push_back({{"stream", r.stream},
                       {"seq", r.seq},
                       {"received", isoTime(r.receivedAt)},
                       {"reason", r.reason},
                       {"verdict", r.verdict},
                       {"report", r.report},
                       {"metrics", r.metrics}});
    return {{"schema", "daxprobe.collector.history/1"}, {"vm", vm}, {"reports", out}};
}

std::string historyTable(const std::string &vm, const std::vector<StoredReport> &reports)
{
    std::string out = fmt::format("history of {} (newest first)\n{:<22} {:<18} {:>7} {:<9} {}\n",
                                  vm, "RECEIVED", "STREAM", "SEQ", "REASON", "VERDICT");
    for (const auto &r : reports)
        out += fmt::format("{:<22} {:<18} {:>7} {:<9} {}\n", isoTime(r.receivedAt), r.stream, r.seq,
                           orDash(r.reason), r.verdict);
    return out;
}

} // namespace daxprobe::collector
