// SQLITE_FULL has three causes SQLite words alike ("database or disk is
// full"): tell them apart, so the operator frees the right thing.
#include "collector/store_full.h"

#include <sys/statvfs.h>

#include <cerrno>
#include <cstdint>
#include <limits>
#include <optional>

#include <fmt/format.h>

namespace daxprobe::collector
{

namespace
{

constexpr std::int64_t kMaxRowid = std::numeric_limits<std::int64_t>::max();

struct Spent {
    std::string table;
    std::int64_t highestId = 0; // the highest id still in the table
};

// A store table whose next AUTOINCREMENT id would pass 2^63-1: SQLite takes
// the larger of the sequence and the table's highest rowid.
std::optional<Spent> spentSequence(SqliteDb &db)
{
    auto q = db.prepare("SELECT s.name, (SELECT coalesce(max(id), 0) FROM reports) FROM "
                        "sqlite_sequence s WHERE s.name = 'reports' COLLATE NOCASE AND "
                        "max(s.seq, (SELECT coalesce(max(id), 0) FROM reports)) >= ?1");
    if (!q)
        return std::nullopt;
    q->bind(1, kMaxRowid);
    if (q->step() != SQLITE_ROW)
        return std::nullopt;
    return Spent{q->columnText(0), q->columnInt(1)};
}

std::string spentMessage(const Spent &s)
{
    std::string remedy =
        s.highestId < kMaxRowid
            ? fmt::format("to go on, set it back to the table's highest id, {} (with the "
                          "collector stopped: sqlite3 collector.db \"UPDATE sqlite_sequence "
                          "SET seq = (SELECT max(id) FROM {}) WHERE name = '{}'\"), or move "
                          "the store aside",
                          s.highestId, s.table, s.table)
            : std::string("a row holds the highest id itself: move the store aside (a new "
                          "one is then started) and read the old one with sqlite3");
    return fmt::format("the AUTOINCREMENT sequence of table {} reached its maximum "
                       "({}; set by hand or by a row inserted with that id): no report can be "
                       "stored, whatever the disk holds; {}",
                       s.table, kMaxRowid, remedy);
}

} // namespace

Result<void> refuseSpentSequence(SqliteDb &db, const std::string &path)
{
    if (auto s = spentSequence(db))
        return failf(ENOSPC, "{}: {}", path, spentMessage(*s));
    return {};
}

std::string whatIsFull(SqliteDb &db)
{
    std::string sqliteSays = db.errorMessage(); // before our queries replace it
    if (auto s = spentSequence(db))
        return spentMessage(*s);
    auto pages = db.prepare("SELECT p.page_count, m.max_page_count FROM pragma_page_count p, "
                            "pragma_max_page_count m");
    if (pages && pages->step() == SQLITE_ROW && pages->columnInt(0) >= pages->columnInt(1))
        return fmt::format("the database reached its max_page_count ({} pages): {}",
                           pages->columnInt(1), sqliteSays);
    const char *file = sqlite3_db_filename(db.get(), "main");
    struct statvfs fs {
    };
    if (file && *file && ::statvfs(file, &fs) == 0)
        return fmt::format("{} (the filesystem holding {} has {} KiB free for the collector)",
                           sqliteSays, file,
                           static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize >> 10);
    return sqliteSays;
}

} // namespace daxprobe::collector
