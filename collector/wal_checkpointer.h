#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "collector/sqlite_db.h"

namespace daxprobe::collector
{

// Copies the write-ahead log back into the database in a thread of its own,
// on a connection of its own. SQLite's default does it in the committing
// thread, inside COMMIT, each time the log passes 1,000 pages (every few
// hundred stored reports): that commit's acks waited for it, and these waits
// were the collector's ack p99 at a paced rate (bench/README.md, "the
// checkpoint leaves the ack path"). Installed as the writer's WAL hook,
// which replaces SQLite's own auto-checkpoint. The thread's checkpoints are
// PASSIVE: they never block the writer or a reader. Only when the log
// reaches kRestartFactor times the threshold (writes that never pause, so
// the log never starts over) does the writer copy the rest itself.
//
// The threshold follows the database: a quarter of its pages, between
// kMinPages and pagesBeforeCheckpoint. So the log, which keeps the disk
// space it once took, never outgrows the database the operator's limits
// (--max-rows, --max-bytes) bound: a small store on a small filesystem
// keeps a small log (a fixed 1,000 pages filled a 2 MiB one for good).
//
// kRestartFactor times the threshold is also the log's hard cap. A reader
// that holds a read transaction (a long query, a backup, a dashboard) pins
// the log: nothing past its snapshot can be copied, the log cannot start
// over, and it grew until it filled the filesystem, after which no commit
// and no checkpoint could run, even once the reader left (issue 31). So
// beforeCommit() stops commits while the log is at its cap and cannot be
// copied back: nothing is acked, the pinning is named, and the thread tries
// TRUNCATE once a second until the reader leaves, when service resumes by
// itself. The log never outgrows the cap by more than a batch or two.
class WalCheckpointer
{
  public:
    // `writer` is the connection whose commits are watched; `path` its file.
    static Result<std::unique_ptr<WalCheckpointer>> start(sqlite3 *writer, const std::string &path,
                                                          int pagesBeforeCheckpoint = 1000);
    ~WalCheckpointer();
    WalCheckpointer(const WalCheckpointer &) = delete;
    WalCheckpointer &operator=(const WalCheckpointer &) = delete;

    struct Stats {
        // By the thread; by the writer itself (the log at kRestartFactor
        // times the threshold); skipped because a lock was taken; failed.
        std::uint64_t done = 0, byWriter = 0, busy = 0, failed = 0;
        std::string lastError;
        // Logs truncated to zero bytes; commits refused while pinned.
        std::uint64_t truncated = 0, pinnedRefusals = 0;
        bool pinned = false;  // the log is at its cap and a reader keeps it there
        std::string pinnedBy; // who, as far as /proc/locks tells ("pid 123")
        std::int64_t capBytes = 0;
    };
    Stats stats() const;
    // On the writer's thread, before each write transaction: an error
    // (naming the pinning) while the log is at its cap and a reader keeps
    // it from being copied back; no commit may then be attempted.
    Result<void> beforeCommit();
    // A commit failed (a full disk, a lock): checkpoint now, not only after
    // a commit that may never come.
    void afterFailedCommit();
    // The -wal file's size on disk now (0: none).
    std::int64_t logBytes() const;
    // For tests: waits until at least `done` checkpoints have finished and
    // none is due or running, or for `timeoutMs`; true if so.
    bool waitForCheckpoints(std::uint64_t done, int timeoutMs) const;

    // Past this many times the threshold, the writer checkpoints itself.
    static constexpr int kRestartFactor = 4;
    // The threshold's floor, and the database's pages per threshold page.
    static constexpr int kMinPages = 32;
    static constexpr int kDatabaseShare = 4;
    // While pinned, the thread tries TRUNCATE this often (a timer, not a
    // wait for anything: SQLite does not say when a reader leaves).
    static constexpr int kPinnedRetryMs = 1000;

  private:
    WalCheckpointer(sqlite3 *writer, SqliteDb own, std::string path, int pageSize, int pages);
    // The log's length in pages that makes a checkpoint due now.
    int threshold() const;
    static int onCommit(void *self, sqlite3 *db, const char *name, int walPages);
    void run();

    sqlite3 *writer_;
    SqliteDb db_; // used by the thread only
    std::string path_;
    int pageSize_;
    int pages_;
    int signalledAt_ = 0; // the log's length at the last signal (writer's thread only)
    int logged_ = 0;      // the log's length at the last commit (writer's thread only)
    mutable std::mutex mu_;
    mutable std::condition_variable wake_, finished_;
    bool due_ = false, running_ = false, stop_ = false;
    Stats stats_;
    std::thread thread_; // started last, with every signal blocked
};

} // namespace daxprobe::collector
