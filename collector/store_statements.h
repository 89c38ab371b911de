#pragma once

#include "collector/sqlite_db.h"
#include "collector/store.h"

namespace daxprobe::collector
{

// The writer's statements, prepared once when the store opens: a report
// costs binds and steps, never a parse of SQL.
struct Store::Statements {
    Statement begin, commit, rollback, schemaVersion;
    Statement insertReport, findResent, findRow, upsertLatest, oldest, deleteUpTo, setCounters;
    Statement noteVm, setHostFacts;
};

} // namespace daxprobe::collector
