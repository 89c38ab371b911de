#include "collector/sqlite_db.h"

#include <cerrno>

namespace daxprobe::collector
{

Result<SqliteDb> SqliteDb::open(const std::string &path, bool readOnly)
{
    sqlite3 *db = nullptr;
    int flags = readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    int rc = sqlite3_open_v2(path.c_str(), &db, flags | SQLITE_OPEN_NOMUTEX, nullptr);
    SqliteDb owner(db); // sqlite3_open_v2 hands out a handle even on failure
    if (rc != SQLITE_OK) {
        // "unable to open database file" alone does not say why: carry the
        // OS's reason (describe() prints it), and for a reader what a
        // missing store means.
        int err = sqlite3_system_errno(db);
        std::string why = owner.errorMessage();
        if (readOnly && err == ENOENT)
            why += "; no collector has stored anything there (see --state-dir)";
        return failf(err != 0 ? err : EIO, "open {}: {}", path, why);
    }
    // The metrics thread never touches the db; a reader (query) may wait on a writer.
    sqlite3_busy_timeout(db, 5000);
    return owner;
}

Result<void> SqliteDb::exec(const char *sql)
{
    char *msg = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &msg) != SQLITE_OK) {
        std::string m = msg ? msg : "unknown error";
        sqlite3_free(msg);
        return failf(EIO, "sqlite: {}", m);
    }
    return {};
}

Result<Statement> SqliteDb::prepare(std::string_view sql)
{
    sqlite3_stmt *s = nullptr;
    if (sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &s, nullptr) != SQLITE_OK)
        return failf(EIO, "sqlite prepare: {}", errorMessage());
    return Statement(s);
}

} // namespace daxprobe::collector
