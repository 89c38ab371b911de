#include "collector/query.h"

#include <algorithm>
#include <charconv>
#include <ctime>
#include <iterator>

#include <fmt/compile.h>
#include <fmt/format.h>

#include "base/text_escape.h"
#include "protocol/report_summary.h"

namespace daxprobe::collector
{

using nlohmann::json;

namespace
{

// UTC, by arithmetic (Howard Hinnant's days-to-civil): gmtime_r and
// strftime took a fifth of `query`'s own time over 1,000 VMs. Appended in
// place: `latest --json` writes two per VM.
void appendIsoTime(std::string &out, std::int64_t t)
{
    if (t <= 0) {
        out += '-';
        return;
    }
    std::int64_t days = t / 86400, secs = t % 86400;
    std::int64_t z = days + 719468, era = z / 146097;
    std::int64_t doe = z - era * 146097;
    std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    std::int64_t mp = (5 * doy + 2) / 153;
    std::int64_t d = doy - (153 * mp + 2) / 5 + 1, m = mp < 10 ? mp + 3 : mp - 9;
    std::int64_t y = yoe + era * 400 + (m <= 2);
    char buf[64]; // t > 0: the year has at most 12 digits, the whole at most 28 bytes
    char *end = fmt::format_to(buf, FMT_COMPILE("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z"), y, m, d,
                               secs / 3600, secs / 60 % 60, secs % 60);
    out.append(buf, end);
}

std::string isoTime(std::int64_t t)
{
    std::string out;
    appendIsoTime(out, t);
    return out;
}

std::string orDash(const std::string &s)
{
    return s.empty() ? "-" : printable(s);
}

// A JSON string, appended. Most fields are printable ASCII (sanitized
// identifiers, names): copied at once; the rest through nlohmann, which
// escapes control characters and replaces bytes that are not UTF-8 (a VM
// name is a directory entry, not necessarily UTF-8).
void appendJsonQuoted(std::string &out, std::string_view s)
{
    if (std::all_of(s.begin(), s.end(),
                    [](char c) { return c >= 0x20 && c <= 0x7e && c != '"' && c != '\\'; })) {
        out += '"';
        out.append(s);
        out += '"';
        return;
    }
    out += json(s).dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string_view rawOrNull(const std::string &text)
{
    return text.empty() ? std::string_view("null") : std::string_view(text);
}

// One JSON object appended to `out`, a member at a time, in the order the
// caller writes them (keys in nlohmann's sorted order, as a DOM dumps them):
// no temporary string per member, which was most of `latest --json`'s own
// time. Stored JSON text (reports, metrics, host facts) goes in as it is.
class JsonMembers
{
  public:
    explicit JsonMembers(std::string &out) : out_(out) { out_ += '{'; }
    ~JsonMembers() { out_ += '}'; }
    JsonMembers(const JsonMembers &) = delete;
    JsonMembers &operator=(const JsonMembers &) = delete;

    JsonMembers &string(std::string_view key, std::string_view v)
    {
        appendJsonQuoted(member(key), v);
        return *this;
    }
    JsonMembers &number(std::string_view key, std::uint64_t n)
    {
        char buf[24];
        auto r = std::to_chars(buf, buf + sizeof(buf), n);
        member(key).append(buf, r.ptr);
        return *this;
    }
    JsonMembers &time(std::string_view key, std::int64_t t)
    {
        appendIsoTime(member(key) += '"', t); // ASCII: nothing to escape
        out_ += '"';
        return *this;
    }
    JsonMembers &raw(std::string_view key, std::string_view json)
    {
        member(key) += json;
        return *this;
    }

  private:
    std::string &member(std::string_view key)
    {
        out_ += first_ ? "\"" : ", \"";
        first_ = false;
        out_ += key; // the renderers' own ASCII keys
        return out_ += "\": ";
    }
    std::string &out_;
    bool first_ = true;
};

} // namespace

LatestRenderer::LatestRenderer(bool json, std::string &out) : json_(json), out_(out)
{
    if (json_)
        out_ += "{\n  \"schema\": \"daxprobe.collector.latest/1\",\n  \"vms\": [";
    else
        fmt::format_to(std::back_inserter(out_), "{:<24} {:<20} {:<20} {:>7} {:>8} {}\n", "VM",
                       "HOSTNAME", "VERDICT", "SEQ", "REPORTS", "LAST REPORT");
}

// Compiled formats: parsing the format string per VM was most of fmt's share
// of `query` over 1,000 VMs.
void LatestRenderer::add(const VmState &v)
{
    auto out = std::back_inserter(out_);
    if (!json_) {
        fmt::format_to(out, FMT_COMPILE("{:<24} {:<20} {:<20} {:>7} {:>8} {}\n"), printable(v.vm),
                       orDash(v.hostname), orDash(v.verdict), v.seq, v.reportCount,
                       isoTime(v.lastReportAt));
        ++count_;
        return;
    }
    out_ += count_++ ? ",\n    " : "\n    ";
    JsonMembers(out_)
        .number("agent_dropped_reports", v.droppedReports)
        .string("agent_version", v.agentVersion)
        .raw("host", rawOrNull(v.hostFactsText))
        .string("hostname", v.hostname)
        .time("last_report", v.lastReportAt)
        .time("last_seen", v.lastSeenAt)
        .string("machine_id", v.machineId)
        .number("reports_stored", v.reportCount)
        .number("seq", v.seq)
        .string("socket", v.socket)
        .string("stream", v.stream)
        .string("verdict", v.verdict)
        .string("vm", v.vm);
}

void LatestRenderer::finish()
{
    if (json_)
        out_ += count_ ? "\n  ]\n}\n" : "]\n}\n";
}

namespace
{

std::string renderLatest(bool json, const std::vector<VmState> &vms)
{
    std::string out;
    LatestRenderer r(json, out);
    for (const auto &v : vms)
        r.add(v);
    r.finish();
    return out;
}

} // namespace

std::string latestJson(const std::vector<VmState> &vms)
{
    return renderLatest(true, vms);
}

std::string latestTable(const std::vector<VmState> &vms)
{
    return renderLatest(false, vms);
}

std::string historyJson(const std::string &vm, const std::vector<StoredReport> &reports)
{
    std::string out = "{\n  \"reports\": [";
    for (std::size_t i = 0; i < reports.size(); ++i) {
        const auto &r = reports[i];
        out += i ? ",\n    " : "\n    ";
        JsonMembers(out)
            .raw("metrics", rawOrNull(r.metricsText))
            .string("reason", r.reason)
            .time("received", r.receivedAt)
            .raw("report", rawOrNull(r.reportText))
            .number("seq", r.seq)
            .string("stream", r.stream)
            .string("verdict", r.verdict);
    }
    out += reports.empty() ? "],\n" : "\n  ],\n";
    out += "  \"schema\": \"daxprobe.collector.history/1\",\n  \"vm\": ";
    appendJsonQuoted(out, vm);
    out += "\n}\n";
    return out;
}

namespace
{

// ", 8 bad sectors, 1 damaged file" when the report has any (the files
// themselves: `query --vm VM --json`, each mount's "badblocks").
std::string badblocksNote(const std::string &reportText)
{
    if (reportText.empty())
        return {};
    protocol::ReportSummary s = protocol::summarizeReport(reportText);
    std::uint64_t sectors = 0, files = 0;
    for (const auto &n : s.namespaces)
        sectors += n.badblocks.value_or(0);
    for (const auto &m : s.mounts)
        files += m.damagedFiles.value_or(0);
    if (sectors == 0 && files == 0)
        return {};
    return fmt::format(", {} bad sectors, {} damaged file{}", sectors, files,
                       files == 1 ? "" : "s");
}

} // namespace

std::string historyTable(const std::string &vm, const std::vector<StoredReport> &reports)
{
    std::string out = fmt::format("history of {} (newest first)\n{:<22} {:<18} {:>7} {:<9} {}\n",
                                  printable(vm), "RECEIVED", "STREAM", "SEQ", "REASON", "VERDICT");
    for (const auto &r : reports)
        out += fmt::format("{:<22} {:<18} {:>7} {:<9} {}{}\n", isoTime(r.receivedAt),
                           printable(r.stream), r.seq, orDash(r.reason), printable(r.verdict),
                           badblocksNote(r.reportText));
    return out;
}

} // namespace daxprobe::collector
