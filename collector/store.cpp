#include "collector/store.h"

#include <cerrno>
#include <cstdlib>

#include "collector/store_full.h"
#include "collector/store_schema.h"
#include "collector/store_statements.h"

namespace daxprobe::collector
{

using nlohmann::json;

namespace
{

// Rolls back unless committed: every early return leaves the db untouched.
class Transaction
{
  public:
    explicit Transaction(Store::Statements &st) : st_(st)
    {
        st_.begin.reset();
        ok_ = st_.begin.step() == SQLITE_DONE;
    }
    ~Transaction()
    {
        // A failed COMMIT (SQLITE_BUSY, SQLITE_FULL) can leave the transaction
        // open; roll it back, or every later BEGIN would fail.
        if (ok_ && !done_) {
            st_.rollback.reset();
            (void)st_.rollback.step();
        }
    }
    bool started() const { return ok_; }
    bool commit()
    {
        st_.commit.reset();
        done_ = st_.commit.step() == SQLITE_DONE;
        return done_;
    }

  private:
    Store::Statements &st_;
    bool ok_ = false, done_ = false;
};

// SQLite's message, or what is full when that is the failure: its own
// "database or disk is full" covers three causes (store_full.cpp).
std::string failure(SqliteDb &db)
{
    return sqlite3_errcode(db.get()) == SQLITE_FULL ? whatIsFull(db) : db.errorMessage();
}

Result<void> stepDone(Statement &s, SqliteDb &db)
{
    int rc = s.step();
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        return failf(EIO, "sqlite step: {}", failure(db));
    return {};
}

} // namespace

std::string defaultStateDir()
{
    if (const char *s = std::getenv("STATE_DIRECTORY"); s && *s) {
        std::string v(s);
        return v.substr(0, v.find(':')); // systemd may pass several, colon-separated
    }
    return "/var/lib/daxprobe";
}

Store::Store(SqliteDb db, StoreOptions options) : db_(std::move(db)), options_(options) {}
Store::Store(Store &&) noexcept = default;
Store &Store::operator=(Store &&) noexcept = default;
Store::~Store() = default;

Result<Store> Store::open(const std::string &path, StoreOptions options)
{
    if (auto r = refuseLinkedFiles(path); !r)
        return tl::unexpected(r.error());
    auto db = SqliteDb::open(path, false);
    if (!db)
        return tl::unexpected(db.error());
    Store s(std::move(*db), options);
    s.path_ = path;
    // WAL: `query` and backups read while we write. An ack promises the
    // report survives a host crash (PROTOCOL.md), so every commit reaches
    // the disk before it returns: FULL syncs the log at each commit (NORMAL
    // only at checkpoints, and lost acked reports when the filesystem
    // aborted). One commit per wake for every guest amortises the sync.
    if (auto r = s.db_.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"); !r)
        return tl::unexpected(r.error());
    // The log keeps the space it took: when it starts over after one big
    // transaction (a resend of many reports), give back what is past 512
    // KiB (the checkpointer's smallest bound, WalCheckpointer::kMinPages).
    if (auto r = s.db_.exec("PRAGMA journal_size_limit=524288;"); !r)
        return tl::unexpected(r.error());
    if (auto r = prepareSchema(s.db_, path); !r)
        return tl::unexpected(r.error());
    if (auto r = refuseSpentSequence(s.db_, path); !r)
        return tl::unexpected(r.error());
    if (auto r = s.prepareWrites(); !r)
        return tl::unexpected(r.error());
    if (auto r = s.recheckSchema(); !r) // remembers the version just checked
        return tl::unexpected(r.error());
    if (auto r = s.rememberLog(); !r)
        return tl::unexpected(r.error());
    auto checkpointer = WalCheckpointer::start(s.db_.get(), path);
    if (!checkpointer)
        return tl::unexpected(checkpointer.error());
    s.checkpointer_ = std::move(*checkpointer);
    // Opening waited up to the default; from now on writes fail fast.
    sqlite3_busy_timeout(s.db_.get(), options.busyTimeoutMs);
    return s;
}

Result<Store> Store::openReadOnly(const std::string &path)
{
    if (auto r = refuseLinkedFiles(path); !r)
        return tl::unexpected(r.error());
    auto db = SqliteDb::open(path, true);
    if (!db)
        return tl::unexpected(db.error());
    return Store(std::move(*db), {});
}

Result<void> Store::prepareWrites()
{
    auto st = std::make_unique<Statements>();
    struct {
        Statement *into;
        const char *sql;
    } all[] = {
        {&st->begin, "BEGIN IMMEDIATE"},
        {&st->commit, "COMMIT"},
        {&st->rollback, "ROLLBACK"},
        {&st->schemaVersion, "PRAGMA schema_version"},
        // Only a resend is passed over: any other constraint that fails
        // (OR IGNORE swallowed them all) fails the batch, and nothing is acked.
        {&st->insertReport,
         "INSERT INTO reports "
         "(vm, stream, seq, received_at, reason, verdict, report, metrics, bytes) "
         "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) "
         "ON CONFLICT (vm, stream, seq) DO NOTHING"},
        // What an insert stored, asked of the table rather than trusted.
        {&st->findResent, "SELECT 1 FROM reports WHERE vm = ?1 AND stream = ?2 AND seq = ?3"},
        {&st->findRow, "SELECT 1 FROM reports WHERE id = ?1"},
        {&st->upsertLatest,
         "INSERT INTO vms (vm, stream, seq, verdict, dropped_reports, last_report_at, "
         "last_seen_at, report_rows, report_bytes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6, ?8, ?7) "
         "ON CONFLICT (vm) DO UPDATE SET stream = excluded.stream, seq = excluded.seq, "
         "verdict = excluded.verdict, dropped_reports = excluded.dropped_reports, "
         "last_report_at = excluded.last_report_at, last_seen_at = excluded.last_seen_at, "
         "report_rows = report_rows + excluded.report_rows, "
         "report_bytes = report_bytes + excluded.report_bytes "
         "RETURNING report_rows, report_bytes"},
        // The VM's oldest rows, via reports_by_vm: the trim reads only what it deletes.
        {&st->oldest, "SELECT id, bytes FROM reports WHERE vm = ?1 AND id < ?2 ORDER BY id"},
        {&st->deleteUpTo, "DELETE FROM reports WHERE vm = ?1 AND id <= ?2"},
        {&st->setCounters, "UPDATE vms SET report_rows = ?2, report_bytes = ?3 WHERE vm = ?1"},
        {&st->noteVm,
         "INSERT INTO vms (vm, socket, machine_id, hostname, agent_version, last_seen_at) "
         "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (vm) DO UPDATE SET "
         "socket = excluded.socket, machine_id = excluded.machine_id, "
         "hostname = excluded.hostname, agent_version = excluded.agent_version, "
         "last_seen_at = excluded.last_seen_at"},
        {&st->setHostFacts, "INSERT INTO vms (vm, host_facts) VALUES (?1, ?2) "
                            "ON CONFLICT (vm) DO UPDATE SET host_facts = excluded.host_facts"},
    };
    for (auto &s : all) {
        auto p = db_.prepare(s.sql);
        if (!p)
            return tl::unexpected(p.error());
        *s.into = std::move(*p);
    }
    st_ = std::move(st);
    return {};
}

Result<void> Store::addReports(std::span<const ChannelReports> batch, std::int64_t now)
{
    if (!st_ && !path_.empty())
        if (auto r = reopen(); !r) // an earlier reopen failed: try again
            return tl::unexpected(r.error());
    if (!st_)
        return failf(EROFS, "store opened read-only");
    if (auto r = checkpointer_->beforeCommit(); !r)
        return tl::unexpected(r.error());
    auto r = commitBatch(batch, now);
    if (!r) {
        // Rolled back: receipts filled before the failure stored nothing.
        for (const auto &part : batch)
            for (auto &p : part.reports)
                p.receipt = Receipt::NotStored;
        checkpointer_->afterFailedCommit();
    }
    return r;
}

Result<void> Store::commitBatch(std::span<const ChannelReports> batch, std::int64_t now)
{
    Transaction tx(*st_);
    if (!tx.started())
        return failf(EIO, "sqlite begin: {}", failure(db_));
    // Under BEGIN IMMEDIATE no one else can change the schema until we commit.
    if (auto r = recheckSchema(); !r)
        return r;
    // The rows first, then the VM's latest state and counters once per
    // channel (not once per report): the `vms` row is rewritten per VM.
    for (const auto &part : batch) {
        VmBatch b{part.vm};
        for (auto &p : part.reports) {
            auto id = insertOne(*part.vm, p.record, now);
            if (!id)
                return tl::unexpected(id.error());
            p.receipt = *id ? Receipt::Stored : Receipt::Duplicate;
            if (*id == 0)
                continue; // a resend: nothing to change, and the ack is still due
            b.last = &p.record;
            b.rows += 1;
            b.bytes += p.record.reportText.size() + p.record.metricsText.size();
            b.newestId = *id;
        }
        if (b.last)
            if (auto r = updateVmRow(b, now); !r)
                return tl::unexpected(r.error());
    }
    if (!tx.commit())
        return failf(EIO, "sqlite commit: {}", failure(db_));
    ++commits_;
    // Committed, but into the file at our path? One deleted under us keeps
    // taking writes, and they vanish when it closes: no ack for those.
    if (fileGone()) {
        ++filesLost_;
        std::string error = fmt::format(
            "{} (or its log) was deleted or replaced while open: this commit went to a file "
            "no one can read; not acknowledged",
            path_);
        if (auto r = reopen(); !r)
            return failf(ESTALE, "{}; reopening failed: {}", error, r.error().describe());
        return failf(ESTALE, "{}; reopened a new database there", error);
    }
    return {};
}

Result<void> Store::recheckSchema()
{
    Statement &v = st_->schemaVersion;
    v.reset();
    if (v.step() != SQLITE_ROW)
        return failf(EIO, "sqlite schema_version: {}", failure(db_));
    std::int64_t version = v.columnInt(0);
    v.reset();
    if (version == checkedSchema_ || (checkedSchema_ >= 0 && !options_.recheckSchema))
        return {};
    auto d = schemaDifferences(db_);
    if (!d)
        return tl::unexpected(d.error());
    if (!d->empty()) {
        std::string lines;
        for (const auto &l : *d)
            lines += (lines.empty() ? "" : "; ") + l;
        return failf(EPROTO,
                     "{}: the store's schema was changed while the collector runs: {}; "
                     "nothing more is stored or acknowledged until that is undone",
                     path_, lines);
    }
    checkedSchema_ = version;
    return {};
}

Result<bool> Store::addReport(const std::string &vm, const protocol::ReportEnvelope &report,
                              std::int64_t now)
{
    BatchEntry p{protocol::recordOf(report)};
    ChannelReports part{&vm, std::span(&p, 1)};
    if (auto r = addReports(std::span(&part, 1), now); !r)
        return tl::unexpected(r.error());
    return p.receipt == Receipt::Stored;
}

Result<std::int64_t> Store::insertOne(const std::string &vm, const protocol::ReportRecord &r,
                                      std::int64_t now)
{
    // The agent's text as it came (validated with its line): no re-encoding.
    auto bytes = static_cast<std::int64_t>(r.reportText.size() + r.metricsText.size());
    Statement &ins = st_->insertReport;
    ins.reset();
    ins.bind(1, vm).bind(2, r.stream).bind(3, static_cast<std::int64_t>(r.seq)).bind(4, now);
    ins.bind(5, r.reason).bind(6, r.summary.code).bindStatic(7, r.reportText);
    if (r.metricsText.empty())
        ins.bindNull(8);
    else
        ins.bindStatic(8, r.metricsText);
    ins.bind(9, bytes);
    if (auto s = stepDone(ins, db_); !s)
        return tl::unexpected(s.error());
    bool inserted = sqlite3_changes(db_.get()) == 1;
    std::int64_t id = sqlite3_last_insert_rowid(db_.get());
    ins.reset();
    // Only a resend may store nothing, and then its row is there. Anything
    // else that passes an insert over or takes its row away (a trigger or
    // index added while the collector runs) fails the batch: no ack.
    if (!inserted) {
        if (!present(st_->findResent.bind(1, vm)
                         .bind(2, r.stream)
                         .bind(3, static_cast<std::int64_t>(r.seq))))
            return failf(EIO,
                         "report {}/{} of {} stored nothing, and no row has its (vm, stream, "
                         "seq): something in the database passed it over (a trigger?); "
                         "not acknowledged",
                         r.stream, r.seq, vm);
        return 0;
    }
    if (!present(st_->findRow.bind(1, id)))
        return failf(EIO,
                     "report {}/{} of {} was inserted and is gone in the same statement: "
                     "something in the database removed it (a trigger?); not acknowledged",
                     r.stream, r.seq, vm);
    return id; // rowids of AUTOINCREMENT start at 1
}

bool Store::present(Statement &query)
{
    bool found = query.step() == SQLITE_ROW;
    query.reset();
    return found;
}

Result<void> Store::updateVmRow(const VmBatch &b, std::int64_t now)
{
    const protocol::ReportRecord &r = *b.last;
    Statement &upd = st_->upsertLatest;
    upd.reset();
    upd.bind(1, *b.vm).bind(2, r.stream).bind(3, static_cast<std::int64_t>(r.seq));
    upd.bind(4, r.summary.code).bind(5, static_cast<std::int64_t>(r.droppedReports));
    upd.bind(6, now).bind(7, static_cast<std::int64_t>(b.bytes));
    upd.bind(8, static_cast<std::int64_t>(b.rows));
    if (upd.step() != SQLITE_ROW)
        return failf(EIO, "sqlite step: {}", failure(db_));
    VmCounters c{static_cast<std::uint64_t>(upd.columnInt(0)),
                 static_cast<std::uint64_t>(upd.columnInt(1))};
    if (auto s = stepDone(upd, db_); !s) // RETURNING: the row, then DONE
        return tl::unexpected(s.error());
    upd.reset();

    // Per-VM limits on rows and bytes: a chatty guest cannot fill the host's
    // disk. Only when over, so the cost is that of the rows deleted. Trimming
    // once after the batch keeps the same rows as trimming after each report:
    // the longest run of newest rows within the limits.
    if (c.rows > options_.maxRowsPerVm || c.bytes > options_.maxBytesPerVm)
        return trim(*b.vm, b.newestId, c);
    return {};
}

Result<void> Store::trim(const std::string &vm, std::int64_t newestId, VmCounters c)
{
    // Oldest first, stopping at the newest row (never deleted: a report
    // alone over the byte limit is still kept).
    Statement &old = st_->oldest;
    old.reset();
    old.bind(1, vm).bind(2, newestId);
    std::int64_t upTo = 0;
    bool exhausted = false;
    while (c.rows > options_.maxRowsPerVm || c.bytes > options_.maxBytesPerVm) {
        int rc = old.step();
        if (rc == SQLITE_DONE) {
            exhausted = true;
            break;
        }
        if (rc != SQLITE_ROW)
            return failf(EIO, "sqlite step: {}", failure(db_));
        upTo = old.columnInt(0);
        auto b = static_cast<std::uint64_t>(old.columnInt(1));
        c.rows = c.rows > 0 ? c.rows - 1 : 0;
        c.bytes = c.bytes > b ? c.bytes - b : 0;
    }
    old.reset();
    if (exhausted) {
        // Only the newest is left: whatever the counters said (a row deleted
        // by hand), they now count exactly that one.
        auto one = db_.prepare("SELECT bytes FROM reports WHERE id = ?1");
        if (!one)
            return tl::unexpected(one.error());
        one->bind(1, newestId);
        c = {1, one->step() == SQLITE_ROW ? static_cast<std::uint64_t>(one->columnInt(0)) : 0};
    }
    if (upTo > 0) {
        Statement &del = st_->deleteUpTo;
        del.reset();
        del.bind(1, vm).bind(2, upTo);
        if (auto s = stepDone(del, db_); !s)
            return s;
        del.reset();
    }
    Statement &set = st_->setCounters;
    set.reset();
    set.bind(1, vm).bind(2, static_cast<std::int64_t>(c.rows));
    set.bind(3, static_cast<std::int64_t>(c.bytes));
    auto r = stepDone(set, db_);
    set.reset();
    return r;
}

Result<void> Store::noteVm(const std::string &vm, const std::string &socket,
                           const protocol::AgentIdentity &id, std::int64_t now)
{
    if (!st_)
        return failf(EROFS, "store opened read-only");
    Statement &st = st_->noteVm;
    st.reset();
    st.bind(1, vm).bind(2, socket).bind(3, id.machineId).bind(4, id.hostname);
    st.bind(5, id.version).bind(6, now);
    auto r = stepDone(st, db_);
    st.reset();
    return r;
}

Result<void> Store::setHostFacts(const std::string &vm, const json &facts)
{
    if (!st_)
        return failf(EROFS, "store opened read-only");
    Statement &st = st_->setHostFacts;
    st.reset();
    st.bind(1, vm).bind(2, facts.dump());
    auto r = stepDone(st, db_);
    st.reset();
    return r;
}

} // namespace daxprobe::collector
