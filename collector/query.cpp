#include "query.h"

#include <algorithm>
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
    return s.empty() ? "-" : printable(s);
}

// Bytes of the UTF-8 sequence starting at s[i] (1 for ASCII), 0 if invalid.
std::size_t sequenceLength(std::string_view s, std::size_t i)
{
    auto u = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
    unsigned char c = u(0);
    std::size_t n = c < 0x80                 ? 1
                    : c >= 0xC2 && c <= 0xDF ? 2
                    : c >= 0xE0 && c <= 0xEF ? 3
                    : c >= 0xF0 && c <= 0xF4 ? 4
                                             : 0;
    if (n == 0 || i + n > s.size())
        return 0;
    for (std::size_t k = 1; k < n; ++k)
        if ((u(k) & 0xC0) != 0x80)
            return 0;
    if ((c == 0xE0 && u(1) < 0xA0) || (c == 0xED && u(1) >= 0xA0) || (c == 0xF0 && u(1) < 0x90) ||
        (c == 0xF4 && u(1) >= 0x90))
        return 0; // overlong, surrogate, past U+10FFFF
    return n;
}

} // namespace

std::string printable(std::string_view s)
{
    std::string out;
    for (std::size_t i = 0; i < s.size();) {
        auto c = static_cast<unsigned char>(s[i]);
        std::size_t n = sequenceLength(s, i);
        bool c1 = n == 2 && c == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0;
        if (n == 0 || c < 0x20 || c == 0x7F || c1) {
            for (std::size_t k = 0; k < std::max<std::size_t>(n, 1); ++k)
                out += fmt::format("\\x{:02x}", static_cast<unsigned char>(s[i + k]));
            i += std::max<std::size_t>(n, 1);
            continue;
        }
        if (c == '\\')
            out += "\\\\";
        else
            out.append(s.substr(i, n));
        i += n;
    }
    return out;
}

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
        out += fmt::format("{:<24} {:<20} {:<20} {:>7} {:>8} {}\n", printable(v.vm),
                           orDash(v.hostname), orDash(v.verdict), v.seq, v.reportCount,
                           isoTime(v.lastReportAt));
    return out;
}

std::string historyJson(const std::string &vm, const std::vector<StoredReport> &reports)
{
    // Keys in nlohmann's order (sorted), one report per line.
    auto str = [](const std::string &v) {
        return json(v).dump(-1, ' ', false, json::error_handler_t::replace);
    };
    auto raw = [](const std::string &text) { return text.empty() ? std::string("null") : text; };
    std::string out = "{\n  \"reports\": [";
    for (std::size_t i = 0; i < reports.size(); ++i) {
        const auto &r = reports[i];
        out += i ? ",\n    " : "\n    ";
        out += fmt::format("{{\"metrics\": {}, \"reason\": {}, \"received\": {}, \"report\": {}, "
                           "\"seq\": {}, \"stream\": {}, \"verdict\": {}}}",
                           raw(r.metricsText), str(r.reason), str(isoTime(r.receivedAt)),
                           raw(r.reportText), r.seq, str(r.stream), str(r.verdict));
    }
    out += reports.empty() ? "],\n" : "\n  ],\n";
    out +=
        fmt::format("  \"schema\": \"daxprobe.collector.history/1\",\n  \"vm\": {}\n}}\n", str(vm));
    return out;
}

std::string historyTable(const std::string &vm, const std::vector<StoredReport> &reports)
{
    std::string out = fmt::format("history of {} (newest first)\n{:<22} {:<18} {:>7} {:<9} {}\n",
                                  printable(vm), "RECEIVED", "STREAM", "SEQ", "REASON", "VERDICT");
    for (const auto &r : reports)
        out += fmt::format("{:<22} {:<18} {:>7} {:<9} {}\n", isoTime(r.receivedAt),
                           printable(r.stream), r.seq, orDash(r.reason), printable(r.verdict));
    return out;
}

} // namespace daxprobe::collector
