// The store's file under its feet: an operator (or a cleanup job) that
// deletes or replaces collector.db while the collector runs.
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "collector/store.h"
#include "collector/store_statements.h"

namespace daxprobe::collector
{

namespace
{

// SQLite's own check (the unix VFS compares the path's inode with the open
// file's), asked of one open file.
bool moved(sqlite3_file *f)
{
    int gone = 0;
    return f && f->pMethods &&
           f->pMethods->xFileControl(f, SQLITE_FCNTL_HAS_MOVED, &gone) == SQLITE_OK && gone;
}

} // namespace

Result<void> refuseLinkedFiles(const std::string &path)
{
    // SQLite will not follow a link for its -shm and -wal (a planted one
    // could redirect its writes) and says only "disk I/O error".
    for (const char *suffix : {"", "-wal", "-shm"}) {
        std::string p = path + suffix;
        struct stat st {
        };
        if (::lstat(p.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
            return failf(ELOOP,
                         "{} is a symbolic link: the store and its -wal and -shm files must be "
                         "plain files in the state directory (remove the link; nothing was "
                         "written through it)",
                         p);
    }
    return {};
}

bool Store::fileGone()
{
    sqlite3_file *db = nullptr;
    sqlite3_file_control(db_.get(), "main", SQLITE_FCNTL_FILE_POINTER, &db);
    return moved(db) || logGone();
}

// The unix VFS opens the log without locks, so it keeps no inode record for
// it and SQLITE_FCNTL_HAS_MOVED always says "not moved" of the log: its
// identity is taken here, once it exists (a WAL connection's first read
// creates it, and it lives as long as the connection). An in-memory
// database has no file and no log.
Result<void> Store::rememberLog()
{
    const char *file = sqlite3_db_filename(db_.get(), "main");
    if (!file || !*file)
        return {};
    struct stat st {
    };
    if (::stat((path_ + "-wal").c_str(), &st) != 0)
        return failf(errno, "{}-wal: {}", path_, std::strerror(errno));
    logId_ = std::pair(st.st_dev, st.st_ino);
    return {};
}

bool Store::logGone() const
{
    struct stat st {
    };
    // In WAL mode the log is where the commit just went.
    return logId_ && (::stat((path_ + "-wal").c_str(), &st) != 0 ||
                      std::pair(st.st_dev, st.st_ino) != *logId_);
}

Result<void> Store::reopen()
{
    // Closed first, checkpointer then writer: the last connection to close
    // deletes "<path>-wal" by name, which must not be the new database's.
    checkpointer_.reset();
    st_.reset();
    db_ = SqliteDb();
    auto fresh = Store::open(path_, options_);
    if (!fresh)
        return tl::unexpected(fresh.error());
    std::uint64_t commits = commits_, lost = filesLost_;
    *this = std::move(*fresh);
    commits_ = commits;
    filesLost_ = lost;
    return {};
}

} // namespace daxprobe::collector
