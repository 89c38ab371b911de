#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "collector/sqlite_db.h"

namespace daxprobe::collector
{

// The store's own tables, as this collector names them. SQLite compares
// table names without regard to case ("REPORTS" is `reports`), and so does
// every lookup of them (sqlite3_stricmp, COLLATE NOCASE).
inline constexpr const char *kStoreTables[] = {"vms", "reports"};

// True if `name` is one of the store's tables, as SQLite compares names.
bool isStoreTable(std::string_view name);

// Every object of `db` that touches the store's tables and that `reference`
// (a database holding only what this collector creates) lacks, one line
// each naming it: a trigger on them or whose body reads or writes them, an
// index on them, a view that reads them, a table whose foreign key refers
// to them. Each could change or hide what an insert stores.
Result<std::vector<std::string>> foreignObjects(SqliteDb &db, SqliteDb &reference);

} // namespace daxprobe::collector
