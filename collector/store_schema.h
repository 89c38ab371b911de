#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "collector/sqlite_db.h"

namespace daxprobe::collector
{

// The schema version this collector writes (PRAGMA user_version): 2, the
// per-VM counters. 1 was v0.1.0 (migrated at open); 0 is a store written
// before the version was kept (told apart by its columns).
inline constexpr int kSchemaVersion = 2;

// Makes the open database the store this collector writes, or says why it
// cannot: an empty file gets the tables, a v0.1.0 store its counters (every
// row kept). Anything else must have the very columns, unique constraints
// and table options the collector writes, and nothing else may touch its
// tables: a store of a newer collector, or one changed by hand (a NOT NULL
// column more, a CHECK, a trigger, an index, a view), is refused naming
// what differs, since inserts into it could fail, be swallowed or be
// rewritten; a store older than v0.1.0 is refused as too old. Tables are
// found as SQLite finds them ("REPORTS" is `reports`). Tables that touch
// none of the store's are left alone.
Result<void> prepareSchema(SqliteDb &db, const std::string &path);

// What differs between the schema of `db` and the one the collector writes,
// one line each (empty: none). For tests and the refusal's message.
Result<std::vector<std::string>> schemaDifferences(SqliteDb &db);

} // namespace daxprobe::collector
