#include "collector/query.h"

#include <algorithm>
#include <charconv>
#include <ctime>
#include <iterator>

#include <fmt/compile.h>
#include <fmt/format.h>

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

// U+061C, U+200E/F, U+202A-E, U+2066-9: they reorder what follows on the
// terminal, so a name could show as another (or hide a part of itself).
bool isBidiControl(std::string_view seq)
{
    auto u = [&](std::size_t k) { return static_cast<unsigned char>(seq[k]); };
    if (seq.size() == 2)
        return u(0) == 0xD8 && u(1) == 0x9C;
    if (seq.size() != 3 || u(0) != 0xE2)
        return false;
    return (u(1) == 0x80 && (u(2) == 0x8E || u(2) == 0x8F || (u(2) >= 0xAA && u(2) <= 0xAE))) ||
           (u(1) == 0x81 && u(2) >= 0xA6 && u(2) <= 0xA9);
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

std::string printable(std::string_view s)
{
    if (std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7f && c != '\\'; }))
        return std::string(s); // the common case: nothing to escape
    std::string out;
    for (std::size_t i = 0; i < s.size();) {
        auto c = static_cast<unsigned char>(s[i]);
        std::size_t n = sequenceLength(s, i);
        bool c1 = n == 2 && c == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0;
        if (n == 0 || c < 0x20 || c == 0x7F || c1 || isBidiControl(s.substr(i, n))) {
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
