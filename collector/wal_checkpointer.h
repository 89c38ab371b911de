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
    };
    Stats stats() const;
    // For tests: waits until at least `done` checkpoints have finished and
    // none is due or running, or for `timeoutMs`; true if so.
    bool waitForCheckpoints(std::uint64_t done, int timeoutMs) const;

    // Past this many times the threshold, the writer checkpoints itself.
    static constexpr int kRestartFactor = 4;
    // The threshold's floor, and the database's pages per threshold page.
    static constexpr int kMinPages = 32;
    static constexpr int kDatabaseShare = 4;

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
    mutable std::mutex mu_;
    mutable std::condition_variable wake_, finished_;
    bool due_ = false, running_ = false, stop_ = false;
    Stats stats_;
    std::thread thread_; // started last, with every signal blocked
};

} // namespace daxprobe::collector
