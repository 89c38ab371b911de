#include "collector/wal_checkpointer.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <pthread.h>

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
    std::unique_ptr<WalCheckpointer> c(
        new WalCheckpointer(writer, std::move(*own), path, pageSize, pagesBeforeCheckpoint));
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
        wake_.wait(lock, [this] { return due_ || stop_; });
        if (stop_)
            return; // the last connection to close checkpoints what is left
        due_ = false;
        running_ = true;
        lock.unlock();
        int logPages = 0, copied = 0;
        int rc = sqlite3_wal_checkpoint_v2(db_.get(), nullptr, SQLITE_CHECKPOINT_PASSIVE, &logPages,
                                           &copied);
        std::string error = rc != SQLITE_OK && rc != SQLITE_BUSY ? db_.errorMessage()
                            : logPages < 0 ? std::string("the database is not in WAL mode")
                                           : std::string();
        lock.lock();
        running_ = false;
        if (rc == SQLITE_BUSY) {
            // The writer held the lock a checkpoint needs (between its reads
            // and its commit): the next commit over the threshold asks again.
            ++stats_.busy;
        } else if (error.empty()) {
            ++stats_.done;
        } else {
            // Not fatal: the log keeps growing until a later checkpoint
            // succeeds, and a write that then fails is reported by addReports.
            ++stats_.failed;
            stats_.lastError = std::move(error);
        }
        finished_.notify_all();
    }
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
