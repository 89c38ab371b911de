#include "collector/wal_checkpointer.h"

#include <sys/stat.h>

#include <cerrno>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <pthread.h>

#include <fmt/format.h>

#include "collector/wal_readers.h"

namespace daxprobe::collector
{

Result<std::unique_ptr<WalCheckpointer>>
WalCheckpointer::start(sqlite3 *writer, const std::string &path, int pagesBeforeCheckpoint)
{
    auto own = SqliteDb::open(path, false);
    if (!own)
        return tl::unexpected(own.error());
    // A connection that has read nothing yet does not know the file is in
    // WAL mode, and its checkpoints would do nothing (and say SQLITE_OK).
    if (auto r = own->exec("PRAGMA journal_mode=WAL"); !r)
        return tl::unexpected(r.error());
    auto size = own->prepare("PRAGMA page_size");
    if (!size)
        return tl::unexpected(size.error());
    int pageSize = size->step() == SQLITE_ROW ? static_cast<int>(size->columnInt(0)) : 4096;
    size = Statement();
    // The thread's TRUNCATE never waits for a reader: it tries again later.
    sqlite3_busy_timeout(own->get(), 0);
    std::unique_ptr<WalCheckpointer> c(
        new WalCheckpointer(writer, std::move(*own), path, pageSize, pagesBeforeCheckpoint));
    // A log left by the last run (a reader pinned it, a crash): copied back
    // and truncated now if no reader holds it, and its length known, so the
    // cap holds from the first commit on.
    int logPages = 0;
    int rc =
        sqlite3_wal_checkpoint_v2(writer, nullptr, SQLITE_CHECKPOINT_TRUNCATE, &logPages, nullptr);
    c->logged_ = rc == SQLITE_OK ? 0 : std::max(logPages, 0);
    // From here on the writer's commits report the log's size to onCommit,
    // and SQLite no longer checkpoints on its own.
    sqlite3_wal_hook(writer, &WalCheckpointer::onCommit, c.get());
    return c;
}

WalCheckpointer::WalCheckpointer(sqlite3 *writer, SqliteDb own, std::string path, int pageSize,
                                 int pages)
    : writer_(writer), db_(std::move(own)), path_(std::move(path)),
      pageSize_(std::max(pageSize, 512)), pages_(pages)
{
    // The thread takes no signal: it starts before the collector blocks
    // SIGTERM for its signalfd, and a SIGTERM delivered here would end the
    // process without its orderly shutdown.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    thread_ = std::thread([this] { run(); });
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

WalCheckpointer::~WalCheckpointer()
{
    sqlite3_wal_hook(writer_, nullptr, nullptr);
    {
        std::lock_guard lock(mu_);
        stop_ = true;
    }
    wake_.notify_one();
    thread_.join();
}

int WalCheckpointer::threshold() const
{
    // One stat per commit (a microsecond): the file's size is the
    // database's pages as far as the log's budget is concerned.
    struct stat st {
    };
    std::int64_t dbPages = ::stat(path_.c_str(), &st) == 0 ? st.st_size / pageSize_ : 0;
    std::int64_t floor = std::min(kMinPages, pages_);
    return static_cast<int>(std::clamp<std::int64_t>(dbPages / kDatabaseShare, floor, pages_));
}

// On the writer's thread, after each commit, with the log's length in pages.
int WalCheckpointer::onCommit(void *self, sqlite3 *writer, const char *name, int walPages)
{
    auto *c = static_cast<WalCheckpointer *>(self);
    c->logged_ = walPages;
    if (walPages < c->signalledAt_)
        c->signalledAt_ = 0; // the log started over
    if (walPages < std::min(kMinPages, c->pages_))
        return SQLITE_OK; // below any threshold: no stat
    int pages = c->threshold();
    if (walPages >= kRestartFactor * pages) {
        // The log starts over only at a write that finds every frame copied;
        // with the thread copying while commits keep coming, none does, and
        // the log would grow without end. The writer copies what is left
        // itself (little: the thread did the rest), as SQLite's own
        // auto-checkpoint would, and its next write starts the log over.
        int rc =
            sqlite3_wal_checkpoint_v2(writer, name, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
        std::lock_guard lock(c->mu_);
        ++(rc == SQLITE_OK ? c->stats_.byWriter : c->stats_.busy);
        return SQLITE_OK;
    }
    if (walPages >= c->signalledAt_ + pages) {
        c->signalledAt_ = walPages; // once per pages_ of growth, not per commit
        {
            std::lock_guard lock(c->mu_);
            c->due_ = true;
        }
        c->wake_.notify_one();
    }
    return SQLITE_OK;
}

void WalCheckpointer::run()
{
    std::unique_lock lock(mu_);
    for (;;) {
        if (stats_.pinned)
            wake_.wait_for(lock, std::chrono::milliseconds(kPinnedRetryMs),
                           [this] { return due_ || stop_; });
        else
            wake_.wait(lock, [this] { return due_ || stop_; });
        if (stop_)
            return; // the last connection to close checkpoints what is left
        bool pinned = stats_.pinned;
        due_ = false;
        running_ = true;
        lock.unlock();
        // Pinned: TRUNCATE, which succeeds only once no reader is left (then
        // the log is copied back and its file is 0 bytes); otherwise it
        // copies what it can, like PASSIVE.
        int logPages = 0, copied = 0;
        int rc = sqlite3_wal_checkpoint_v2(
            db_.get(), nullptr, pinned ? SQLITE_CHECKPOINT_TRUNCATE : SQLITE_CHECKPOINT_PASSIVE,
            &logPages, &copied);
        std::string error = rc != SQLITE_OK && rc != SQLITE_BUSY ? db_.errorMessage()
                            : logPages < 0 ? std::string("the database is not in WAL mode")
                                           : std::string();
        lock.lock();
        running_ = false;
        if (rc == SQLITE_BUSY) {
            // The writer held the lock a checkpoint needs (between its reads
            // and its commit), or a reader is still there: asked again at the
            // next commit over the threshold, or the next tick while pinned.
            ++stats_.busy;
        } else if (error.empty()) {
            ++stats_.done;
            if (pinned) {
                ++stats_.truncated;
                stats_.pinned = false;
                stats_.pinnedBy.clear();
            }
        } else {
            // Not fatal: the log keeps growing until a later checkpoint
            // succeeds, and a write that then fails is reported by addReports.
            ++stats_.failed;
            stats_.lastError = std::move(error);
        }
        finished_.notify_all();
    }
}

Result<void> WalCheckpointer::beforeCommit()
{
    int cap = kRestartFactor * threshold();
    if (logged_ < cap) {
        std::lock_guard lock(mu_);
        stats_.capBytes = std::int64_t(cap) * pageSize_;
        return {};
    }
    // At the cap. Copied back to its end (the usual case: the writer's own
    // checkpoint at the cap did it), the next write starts the log over.
    // The thread's checkpoint holds the lock this one needs: let it finish
    // (a passive copy, bounded), or its BUSY would read as a reader's pin.
    int logPages = 0, copied = 0, rc = SQLITE_BUSY;
    for (int tries = 0; rc == SQLITE_BUSY && tries < 3; ++tries) {
        {
            std::unique_lock lock(mu_);
            finished_.wait(lock, [this] { return !running_; });
        }
        rc = sqlite3_wal_checkpoint_v2(writer_, nullptr, SQLITE_CHECKPOINT_PASSIVE, &logPages,
                                       &copied);
    }
    if (rc == SQLITE_OK && copied >= logPages) {
        std::lock_guard lock(mu_);
        stats_.pinned = false;
        return {};
    }
    // Else a reader keeps frames from being copied: TRUNCATE waits for it
    // as long as the writer waits for any lock (StoreOptions::busyTimeoutMs).
    rc =
        sqlite3_wal_checkpoint_v2(writer_, nullptr, SQLITE_CHECKPOINT_TRUNCATE, &logPages, &copied);
    std::lock_guard lock(mu_);
    if (rc == SQLITE_OK) {
        logged_ = 0;
        ++stats_.truncated;
        stats_.pinned = false;
        return {};
    }
    std::string who;
    for (int pid : walReaders(path_))
        who += fmt::format("{}pid {}", who.empty() ? "" : ", ", pid);
    bool started = !stats_.pinned;
    stats_.pinned = true;
    stats_.pinnedBy = who;
    stats_.capBytes = std::int64_t(cap) * pageSize_;
    ++stats_.pinnedRefusals;
    if (started)
        wake_.notify_one(); // the thread's timer starts
    return failf(EBUSY,
                 "the write-ahead log of {} is at its cap ({} of {} pages, {} KiB) and a reader's "
                 "transaction keeps it from being copied back ({}): no commit until that reader "
                 "ends its transaction",
                 path_, std::max(logPages, logged_), cap, stats_.capBytes >> 10,
                 who.empty() ? std::string("its process is not known") : who);
}

void WalCheckpointer::afterFailedCommit()
{
    {
        std::lock_guard lock(mu_);
        due_ = true;
    }
    wake_.notify_one();
}

std::int64_t WalCheckpointer::logBytes() const
{
    struct stat st {
    };
    return ::stat((path_ + "-wal").c_str(), &st) == 0 ? st.st_size : 0;
}

WalCheckpointer::Stats WalCheckpointer::stats() const
{
    std::lock_guard lock(mu_);
    return stats_;
}

bool WalCheckpointer::waitForCheckpoints(std::uint64_t done, int timeoutMs) const
{
    std::unique_lock lock(mu_);
    return finished_.wait_for(lock, std::chrono::milliseconds(timeoutMs),
                              [&] { return stats_.done >= done && !due_ && !running_; });
}

} // namespace daxprobe::collector
