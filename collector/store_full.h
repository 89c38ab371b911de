#pragma once

#include <string>

#include "base/result.h"
#include "collector/sqlite_db.h"

namespace daxprobe::collector
{

// An error if the AUTOINCREMENT sequence of a store table has reached its
// maximum (2^63-1): SQLite then refuses every insert with "database or disk
// is full", however empty the disk. Refused at open, naming the table and
// what the operator can do, rather than run and store nothing.
Result<void> refuseSpentSequence(SqliteDb &db, const std::string &path);

// What is full when SQLite said SQLITE_FULL ("database or disk is full"):
// a store table's AUTOINCREMENT sequence, the database's max_page_count,
// or the filesystem, each named; SQLite's own words when none of them is.
std::string whatIsFull(SqliteDb &db);

} // namespace daxprobe::collector
