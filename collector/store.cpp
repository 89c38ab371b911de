#include "store.h"

#include <cerrno>

namespace daxprobe::collector
{

using nlohmann::json;

namespace
{

constexpr const char *kSchema = R"sql(
CREATE TABLE IF NOT EXISTS vms (
  vm TEXT PRIMARY KEY,
  socket TEXT NOT NULL DEFAULT '',
  machine_id TEXT NOT NULL DEFAULT '',
  hostname TEXT NOT NULL DEFAULT '',
  agent_version TEXT NOT NULL DEFAULT '',
  stream TEXT NOT NULL DEFAULT '',
  seq INTEGER NOT NULL DEFAULT 0,
  verdict TEXT NOT NULL DEFAULT '',
  dropped_reports INTEGER NOT NULL DEFAULT 0,
  last_report_at INTEGER NOT NULL DEFAULT 0,
  last_seen_at INTEGER NOT NULL DEFAULT 0,
  host_facts TEXT
);
CREATE TABLE IF NOT EXISTS reports (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  vm TEXT NOT NULL,
  stream TEXT NOT NULL,
  seq INTEGER NOT NULL,
  received_at INTEGER NOT NULL,
  reason TEXT NOT NULL,
  verdict TEXT NOT NULL,
  report TEXT NOT NULL,
  metrics TEXT,
  bytes INTEGER NOT NULL DEFAULT 0,
  UNIQUE (vm, stream, seq)
);
CREATE INDEX IF NOT EXISTS reports_by_vm ON reports (vm, id);
)sql";

// Rolls back unless committed: every early return leaves the db untouched.
class Transaction
{
  public:
    explicit Transaction(SqliteDb &db) : db_(db)
    {
        ok_ = static_cast<bool>(db_.exec("BEGIN IMMEDIATE"));
    }
    ~Transaction()
    {
        if (ok_ && !done_)
            (void)db_.exec("ROLLBACK");
    }
    bool started() const { return ok_; }
    Result<void> commit()
    {
        auto r = db_.exec("COMMIT");
        // A failed COMMIT (SQLITE_BUSY, SQLITE_FULL) can leave the transaction
        // open; the destructor rolls it back, or every later BEGIN would fail.
        done_ = static_cast<bool>(r);
        return r;
    }

  private:
    SqliteDb &db_;
    bool ok_ = false, done_ = false;
};

Result<void> stepDone(Statement &s, SqliteDb &db)
{
    int rc = s.step();
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        return failf(EIO, "sqlite step: {}", db.errorMessage());
    return {};
}

} // namespace

std::string verdictCode(const json &report)
{
    if (report.is_object()) {
        auto v = report.find("verdict");
        if (v != report.end() && v->is_object()) {
            auto c = v->find("code");
            if (c != v->end() && c->is_string())
                return protocol::sanitizeIdentifier(c->get_ref<const std::string &>(), 64);
        }
    }
    return "unknown";
}

Result<Store> Store::open(const std::string &path, StoreOptions options)
{
    auto db = SqliteDb::open(path, false);
    if (!db)
        return tl::unexpected(db.error());
    Store s(std::move(*db), options);
    // WAL: `query` and backups read while we write; NORMAL sync is durable
    // across a collector crash (not a power cut), enough to ack on.
    if (auto r = s.db_.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"); !r)
        return tl::unexpected(r.error());
    if (auto r = s.migrate(); !r)
        return tl::unexpected(r.error());
    // Opening waited up to the default; from now on writes fail fast.
    sqlite3_busy_timeout(s.db_.get(), options.busyTimeoutMs);
    return s;
}

Result<Store> Store::openReadOnly(const std::string &path)
{
    auto db = SqliteDb::open(path, true);
    if (!db)
        return tl::unexpected(db.error());
    return Store(std::move(*db), {});
}

Result<void> Store::migrate()
{
    return db_.exec(kSchema);
}

Result<bool> Store::addReport(const std::string &vm, const protocol::ReportEnvelope &r,
                              std::int64_t now)
{
    Transaction tx(db_);
    if (!tx.started())
        return failf(EIO, "sqlite begin: {}", db_.errorMessage());
    std::string verdict = verdictCode(r.report);

    auto ins =
        db_.prepare("INSERT OR IGNORE INTO reports "
                    "(vm, stream, seq, received_at, reason, verdict, report, metrics, bytes) "
                    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
    if (!ins)
        return tl::unexpected(ins.error());
    std::string metrics =
        r.metrics.is_null() ? "" : r.metrics.dump(-1, ' ', false, json::error_handler_t::replace);
    ins->bind(1, vm).bind(2, r.stream).bind(3, static_cast<std::int64_t>(r.seq)).bind(4, now);
    ins->bind(5, r.reason).bind(6, verdict);
    std::string reportText = r.report.dump(-1, ' ', false, json::error_handler_t::replace);
    ins->bind(7, reportText);
    if (metrics.empty())
        ins->bindNull(8);
    else
        ins->bind(8, metrics);
    ins->bind(9, static_cast<std::int64_t>(reportText.size() + metrics.size()));
    if (auto s = stepDone(*ins, db_); !s)
        return tl::unexpected(s.error());
    bool inserted = sqlite3_changes(db_.get()) > 0;
    if (!inserted)
        return false; // a resend: nothing to change, and the ack is still due

    auto upd = db_.prepare(
        "INSERT INTO vms (vm, stream, seq, verdict, dropped_reports, last_report_at, last_seen_at) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6) ON CONFLICT (vm) DO UPDATE SET "
        "stream = excluded.stream, seq = excluded.seq, verdict = excluded.verdict, "
        "dropped_reports = excluded.dropped_reports, last_report_at = excluded.last_report_at, "
        "last_seen_at = excluded.last_seen_at");
    if (!upd)
        return tl::unexpected(upd.error());
    upd->bind(1, vm).bind(2, r.stream).bind(3, static_cast<std::int64_t>(r.seq)).bind(4, verdict);
    upd->bind(5, static_cast<std::int64_t>(r.droppedReports)).bind(6, now);
    if (auto s = stepDone(*upd, db_); !s)
        return tl::unexpected(s.error());

    // Per-VM limits on rows and bytes: a chatty guest cannot fill the host's
    // disk. Keeps the newest rows that fit both.
    auto trim =
        db_.prepare("DELETE FROM reports WHERE vm = ?1 AND id <= (SELECT id FROM ("
                    "  SELECT id, ROW_NUMBER() OVER w AS n, SUM(bytes) OVER w AS total FROM reports"
                    "  WHERE vm = ?1 WINDOW w AS (ORDER BY id DESC))"
                    " WHERE n > 1 AND (n > ?2 OR total > ?3) ORDER BY id DESC LIMIT 1)");
    if (!trim)
        return tl::unexpected(trim.error());
    trim->bind(1, vm).bind(2, static_cast<std::int64_t>(options_.maxRowsPerVm));
    trim->bind(3, static_cast<std::int64_t>(options_.maxBytesPerVm));
    if (auto s = stepDone(*trim, db_); !s)
        return tl::unexpected(s.error());

    if (auto c = tx.commit(); !c)
        return tl::unexpected(c.error());
    return true;
}

Result<void> Store::noteVm(const std::string &vm, const std::string &socket,
                           const protocol::AgentIdentity &id, std::int64_t now)
{
    auto st = db_.prepare(
        "INSERT INTO vms (vm, socket, machine_id, hostname, agent_version, last_seen_at) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (vm) DO UPDATE SET "
        "socket = excluded.socket, machine_id = excluded.machine_id, hostname = excluded.hostname, "
        "agent_version = excluded.agent_version, last_seen_at = excluded.last_seen_at");
    if (!st)
        return tl::unexpected(st.error());
    st->bind(1, vm).bind(2, socket).bind(3, id.machineId).bind(4, id.hostname);
    st->bind(5, id.version).bind(6, now);
    return stepDone(*st, db_);
}

Result<void> Store::setHostFacts(const std::string &vm, const json &facts)
{
    auto st = db_.prepare("INSERT INTO vms (vm, host_facts) VALUES (?1, ?2) "
                          "ON CONFLICT (vm) DO UPDATE SET host_facts = excluded.host_facts");
    if (!st)
        return tl::unexpected(st.error());
    st->bind(1, vm).bind(2, facts.dump());
    return stepDone(*st, db_);
}

Result<std::vector<VmState>> Store::latest()
{
    auto st = db_.prepare(
        "SELECT v.vm, v.socket, v.machine_id, v.hostname, v.agent_version, v.stream, v.seq, "
        "v.verdict, v.dropped_reports, v.last_report_at, v.last_seen_at, v.host_facts, "
        "(SELECT COUNT(*) FROM reports r WHERE r.vm = v.vm) FROM vms v ORDER BY v.vm");
    if (!st)
        return tl::unexpected(st.error());
    std::vector<VmState> out;
    int rc;
    while ((rc = st->step()) == SQLITE_ROW) {
        VmState v;
        v.vm = st->columnText(0);
        v.socket = st->columnText(1);
        v.machineId = st->columnText(2);
        v.hostname = st->columnText(3);
        v.agentVersion = st->columnText(4);
        v.stream = st->columnText(5);
        v.seq = static_cast<std::uint64_t>(st->columnInt(6));
        v.verdict = st->columnText(7);
        v.droppedReports = static_cast<std::uint64_t>(st->columnInt(8));
        v.lastReportAt = st->columnInt(9);
        v.lastSeenAt = st->columnInt(10);
        if (!st->columnIsNull(11))
            v.hostFacts = json::parse(st->columnText(11), nullptr, false);
        v.reportCount = static_cast<std::uint64_t>(st->columnInt(12));
        out.push_back(std::move(v));
    }
    if (rc != SQLITE_DONE)
        return failf(EIO, "sqlite: {}", db_.errorMessage());
    return out;
}

Result<std::vector<StoredReport>> Store::history(const std::string &vm, std::size_t limit)
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
        r.report = json::parse(st->columnText(5), nullptr, false);
        if (!st->columnIsNull(6))
            r.metrics = json::parse(st->columnText(6), nullptr, false);
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

} // namespace daxprobe::collector
