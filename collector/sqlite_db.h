#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <sqlite3.h>

#include "base/result.h"

namespace daxprobe::collector
{

// Sole owner of a prepared statement. Bind indexes are 1-based, columns 0-based.
class Statement
{
  public:
    Statement() = default;
    explicit Statement(sqlite3_stmt *s) : stmt_(s) {}
    ~Statement() { sqlite3_finalize(stmt_); }
    Statement(const Statement &) = delete;
    Statement &operator=(const Statement &) = delete;
    Statement(Statement &&o) noexcept : stmt_(o.stmt_) { o.stmt_ = nullptr; }
    Statement &operator=(Statement &&o) noexcept
    {
        std::swap(stmt_, o.stmt_);
        return *this;
    }

    Statement &bind(int i, std::string_view v)
    {
        sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
        return *this;
    }
    // Without a copy: v must outlive the step (reset() clears the binding).
    Statement &bindStatic(int i, std::string_view v)
    {
        sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
        return *this;
    }
    Statement &bind(int i, std::int64_t v)
    {
        sqlite3_bind_int64(stmt_, i, v);
        return *this;
    }
    Statement &bindNull(int i)
    {
        sqlite3_bind_null(stmt_, i);
        return *this;
    }
    // SQLITE_ROW, SQLITE_DONE, or an error code.
    int step() { return sqlite3_step(stmt_); }
    void reset()
    {
        sqlite3_reset(stmt_);
        sqlite3_clear_bindings(stmt_);
    }
    std::int64_t columnInt(int i) const { return sqlite3_column_int64(stmt_, i); }
    std::string columnText(int i) const { return std::string(columnView(i)); }
    // Valid until the next step(), reset() or column call on this column.
    std::string_view columnView(int i) const
    {
        auto *p = reinterpret_cast<const char *>(sqlite3_column_text(stmt_, i));
        return p ? std::string_view(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, i)))
                 : std::string_view();
    }
    bool columnIsNull(int i) const { return sqlite3_column_type(stmt_, i) == SQLITE_NULL; }

  private:
    sqlite3_stmt *stmt_ = nullptr;
};

// Sole owner of a sqlite3 connection (docs/conventions.md, 3).
class SqliteDb
{
  public:
    static Result<SqliteDb> open(const std::string &path, bool readOnly);
    SqliteDb() = default;
    ~SqliteDb() { sqlite3_close_v2(db_); }
    SqliteDb(const SqliteDb &) = delete;
    SqliteDb &operator=(const SqliteDb &) = delete;
    SqliteDb(SqliteDb &&o) noexcept : db_(o.db_) { o.db_ = nullptr; }
    SqliteDb &operator=(SqliteDb &&o) noexcept
    {
        std::swap(db_, o.db_);
        return *this;
    }

    Result<void> exec(const char *sql);
    Result<Statement> prepare(std::string_view sql);
    std::string errorMessage() const { return db_ ? sqlite3_errmsg(db_) : "no database"; }
    sqlite3 *get() const { return db_; }

  private:
    explicit SqliteDb(sqlite3 *db) : db_(db) {}
    sqlite3 *db_ = nullptr;
};

} // namespace daxprobe::collector
