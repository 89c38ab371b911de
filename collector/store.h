#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "collector/report_batch.h"
#include "collector/sqlite_db.h"
#include "collector/wal_checkpointer.h"
#include "protocol/schema.h"

namespace daxprobe::collector
{

struct StoredReport {
    std::string vm, stream, verdict, reason;
    std::uint64_t seq = 0;
    std::int64_t receivedAt = 0; // unix seconds
    nlohmann::json report, metrics;
    // The stored JSON text as it is (no parse): `query --json` splices it in.
    std::string reportText, metricsText;
};

struct VmState {
    std::string vm, socket, machineId, hostname, agentVersion;
    std::string stream, verdict;
    std::uint64_t seq = 0, droppedReports = 0;
    std::int64_t lastReportAt = 0, lastSeenAt = 0;
    std::uint64_t reportCount = 0;
    nlohmann::json hostFacts;  // null until the QEMU process was found
    std::string hostFactsText; // as stored (empty: none); `query --json` splices it
};

struct StoreOptions {
    std::size_t maxRowsPerVm = 10000;     // oldest reports beyond this are deleted
    std::size_t maxBytesPerVm = 64 << 20; // and beyond this much report text
    // How long a write waits for another process's lock (a backup, the
    // sqlite3 shell) before failing. Short: the collector's one thread serves
    // every guest, and a failed report is retried later, not waited for.
    int busyTimeoutMs = 50;
    // Check the schema again before a batch when it changed since the last
    // check. Off only in tests of the per-row checks behind it.
    bool recheckSchema = true;
};

// What the store holds of one VM: kept as counters in `vms`, in the same
// transaction as the rows, so neither the trim nor `query` counts rows.
struct VmCounters {
    std::uint64_t rows = 0, bytes = 0;
};

// Every report and the latest state per VM, in SQLite with WAL so `query`
// reads while the collector writes. The VM key is the host-side channel name,
// never anything the guest claims.
class Store
{
  public:
    static Result<Store> open(const std::string &path, StoreOptions options = {});
    static Result<Store> openReadOnly(const std::string &path);
    Store(Store &&) noexcept;
    Store &operator=(Store &&) noexcept;
    ~Store();

    // Commits every report of the batch (and each VM's latest state and
    // counters) in one transaction: all or nothing. On success every
    // receipt is filled: Stored, or Duplicate for a (vm, stream, seq)
    // already stored (a resend, also within the batch). Over a VM's limits,
    // its oldest rows are deleted, never its newest. Any failure but a
    // resend's conflict fails the batch, and so does a write-ahead log that
    // a reader pins at its cap (WalCheckpointer::beforeCommit): every
    // receipt is then NotStored, and nothing of it is to be acked.
    Result<void> addReports(std::span<const ChannelReports> batch, std::int64_t now);
    Result<bool> addReport(const std::string &vm, const protocol::ReportEnvelope &report,
                           std::int64_t now);
    Result<void> noteVm(const std::string &vm, const std::string &socket,
                        const protocol::AgentIdentity &identity, std::int64_t now);
    Result<void> setHostFacts(const std::string &vm, const nlohmann::json &facts);

    // parse=false leaves hostFacts null (text only).
    Result<std::vector<VmState>> latest(bool parse = true);
    // The same, one VM at a time in one reused VmState, in VM order: what
    // `query` renders needs no vector of every VM.
    Result<void> eachLatest(bool parse, const std::function<void(const VmState &)> &visit);
    // Newest first. parse=false leaves report/metrics null (text only).
    Result<std::vector<StoredReport>> history(const std::string &vm, std::size_t limit,
                                              bool parse = true);
    // Counted in the table (the truth the counters must match).
    Result<std::uint64_t> reportCount(const std::string &vm);
    // The VM's counters as stored (zero for an unknown VM).
    Result<VmCounters> counters(const std::string &vm);
    // Transactions committed by addReports since open (one per batch).
    std::uint64_t commits() const { return commits_; }
    // Times a commit found the database (or its log) deleted or replaced
    // under it: that batch failed, nothing of it is to be acked, and the
    // store reopened its path (a new, empty database). store_file.cpp.
    std::uint64_t filesLost() const { return filesLost_; }
    // The writer's checkpoints, done in a thread of their own (null for a
    // read-only store).
    const WalCheckpointer *checkpointer() const { return checkpointer_.get(); }

    struct Statements; // store_statements.h

  private:
    Store(SqliteDb db, StoreOptions options);
    Result<void> prepareWrites();
    // What one channel's part of a batch changed of its VM: its counters
    // grow by rows/bytes, its latest state is `last`'s.
    struct VmBatch {
        const std::string *vm;
        const protocol::ReportRecord *last = nullptr;
        std::uint64_t rows = 0, bytes = 0;
        std::int64_t newestId = 0;
    };
    // addReports' transaction, once the log has room.
    Result<void> commitBatch(std::span<const ChannelReports> batch, std::int64_t now);
    // The row's id, or 0 for a resend (already stored).
    Result<std::int64_t> insertOne(const std::string &vm, const protocol::ReportRecord &r,
                                   std::int64_t now);
    // True if the query (bound) answers a row; leaves it reset.
    static bool present(Statement &query);
    // An error if the schema changed since it was checked and is no longer
    // the collector's; run inside the batch's transaction.
    Result<void> recheckSchema();
    Result<void> updateVmRow(const VmBatch &b, std::int64_t now);
    Result<void> trim(const std::string &vm, std::int64_t newestId, VmCounters c);
    // True if the open database or its log is no longer the file at its path.
    bool fileGone();
    Result<void> rememberLog();
    bool logGone() const;
    // Closes the lost files, then opens the path anew (store_file.cpp).
    Result<void> reopen();

    std::string path_; // empty: read-only
    SqliteDb db_;
    StoreOptions options_;
    std::unique_ptr<Statements> st_; // prepared once; finalized before db_ closes
    std::uint64_t commits_ = 0, filesLost_ = 0;
    // PRAGMA schema_version when the schema was last found as this
    // collector writes it: any change (a trigger created while we run) is
    // checked again before a batch is written.
    std::int64_t checkedSchema_ = -1;
    // The log's file when the store opened (none in memory).
    std::optional<std::pair<dev_t, ino_t>> logId_;
    // Declared after db_: stopped (and unhooked) before the writer closes.
    std::unique_ptr<WalCheckpointer> checkpointer_;
};

// An error if the database, its -wal or its -shm is a symbolic link
// (store_file.cpp).
Result<void> refuseLinkedFiles(const std::string &path);

// The embedded default: $STATE_DIRECTORY (systemd StateDirectory=), else
// /var/lib/daxprobe.
std::string defaultStateDir();

} // namespace daxprobe::collector
