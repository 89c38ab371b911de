// The store's read side: what `query` and the tests ask. Read-only
// connections use only these, so they prepare per call (once per process).
#include <cerrno>

#include "collector/store.h"

namespace daxprobe::collector
{

using nlohmann::json;

Result<std::vector<VmState>> Store::latest(bool parse)
{
    std::vector<VmState> out;
    auto r = eachLatest(parse, [&](const VmState &v) { out.push_back(v); });
    if (!r)
        return tl::unexpected(r.error());
    return out;
}

Result<void> Store::eachLatest(bool parse, const std::function<void(const VmState &)> &visit)
{
    // The row count is the VM's counter, kept with the rows: no COUNT(*)
    // over a million reports.
    const std::string columns = "SELECT vm, socket, machine_id, hostname, agent_version, stream, "
                                "seq, verdict, dropped_reports, last_report_at, last_seen_at, "
                                "host_facts, ";
    auto st = db_.prepare(columns + "report_rows FROM vms ORDER BY vm");
    if (!st) // a store no collector of this version has opened yet: count
        st = db_.prepare(columns + "(SELECT COUNT(*) FROM reports r WHERE r.vm = vms.vm) "
                                   "FROM vms ORDER BY vm");
    if (!st)
        return tl::unexpected(st.error());
    VmState v; // reused: its strings keep their capacity from row to row
    int rc;
    while ((rc = st->step()) == SQLITE_ROW) {
        v.vm.assign(st->columnView(0));
        v.socket.assign(st->columnView(1));
        v.machineId.assign(st->columnView(2));
        v.hostname.assign(st->columnView(3));
        v.agentVersion.assign(st->columnView(4));
        v.stream.assign(st->columnView(5));
        v.seq = static_cast<std::uint64_t>(st->columnInt(6));
        v.verdict.assign(st->columnView(7));
        v.droppedReports = static_cast<std::uint64_t>(st->columnInt(8));
        v.lastReportAt = st->columnInt(9);
        v.lastSeenAt = st->columnInt(10);
        v.hostFactsText.clear();
        v.hostFacts = nullptr;
        if (!st->columnIsNull(11)) {
            v.hostFactsText.assign(st->columnView(11));
            if (parse)
                v.hostFacts = json::parse(v.hostFactsText, nullptr, false);
        }
        v.reportCount = static_cast<std::uint64_t>(st->columnInt(12));
        visit(v);
    }
    if (rc != SQLITE_DONE)
        return failf(EIO, "sqlite: {}", db_.errorMessage());
    return {};
}

Result<std::vector<StoredReport>> Store::history(const std::string &vm, std::size_t limit,
                                                 bool parse)
{
    auto st = db_.prepare("SELECT stream, seq, received_at, reason, verdict, report, metrics "
                          "FROM reports WHERE vm = ?1 ORDER BY id DESC LIMIT ?2");
    if (!st)
        return tl::unexpected(st.error());
    st->bind(1, vm).bind(2, static_cast<std::int64_t>(limit));
    std::vector<StoredReport> out;
    int rc;
    while ((rc = st->step()) == SQLITE_ROW) {
        StoredReport r;
        r.vm = vm;
        r.stream = st->columnText(0);
        r.seq = static_cast<std::uint64_t>(st->columnInt(1));
        r.receivedAt = st->columnInt(2);
        r.reason = st->columnText(3);
        r.verdict = st->columnText(4);
        r.reportText = st->columnText(5);
        if (!st->columnIsNull(6))
            r.metricsText = st->columnText(6);
        if (parse) {
            r.report = json::parse(r.reportText, nullptr, false);
            if (!r.metricsText.empty())
                r.metrics = json::parse(r.metricsText, nullptr, false);
        }
        out.push_back(std::move(r));
    }
    if (rc != SQLITE_DONE)
        return failf(EIO, "sqlite: {}", db_.errorMessage());
    return out;
}

Result<std::uint64_t> Store::reportCount(const std::string &vm)
{
    auto st = db_.prepare("SELECT COUNT(*) FROM reports WHERE vm = ?1");
    if (!st)
        return tl::unexpected(st.error());
    st->bind(1, vm);
    if (st->step() != SQLITE_ROW)
        return failf(EIO, "sqlite: {}", db_.errorMessage());
    return static_cast<std::uint64_t>(st->columnInt(0));
}

Result<VmCounters> Store::counters(const std::string &vm)
{
    auto st = db_.prepare("SELECT report_rows, report_bytes FROM vms WHERE vm = ?1");
    if (!st)
        return tl::unexpected(st.error());
    st->bind(1, vm);
    int rc = st->step();
    if (rc == SQLITE_DONE)
        return VmCounters{};
    if (rc != SQLITE_ROW)
        return failf(EIO, "sqlite: {}", db_.errorMessage());
    return VmCounters{static_cast<std::uint64_t>(st->columnInt(0)),
                      static_cast<std::uint64_t>(st->columnInt(1))};
}

} // namespace daxprobe::collector
