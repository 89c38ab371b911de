// The store's schema at open (issue 31, break 3): what the collector writes
// works, v0.1.0 is migrated, anything else is refused with what differs,
// and no insert but a resend is ever passed over.
#include <catch2/catch.hpp>

#include "collector/store.h"
#include "collector/store_schema.h"
#include "tests/unit/collector/tmpdir.h"

using namespace daxprobe;
using namespace daxprobe::collector;

namespace
{

protocol::ReportEnvelope schemaReport(std::uint64_t seq)
{
    return {"aa", seq, "interval", {{"verdict", {{"code", "dax_verified"}}}}, {{"x", seq}}, 0};
}

// A store made by today's collector, then changed with `sql` by hand.
std::string changedStore(const TempDir &dir, const char *sql)
{
    std::string path = dir.path() + "/c.db";
    {
        auto s = Store::open(path);
        REQUIRE(s);
        REQUIRE(s->addReport("vm1", schemaReport(1), 1));
    }
    auto db = SqliteDb::open(path, false);
    REQUIRE(db);
    REQUIRE(db->exec(sql));
    return path;
}

std::string refusal(const std::string &path)
{
    auto s = Store::open(path);
    REQUIRE_FALSE(s);
    return s.error().message;
}

} // namespace

TEST_CASE("a store as this collector writes it has no differences", "[collector][schema]")
{
    TempDir dir;
    auto s = Store::open(dir.path() + "/c.db");
    REQUIRE(s);
    auto db = SqliteDb::open(dir.path() + "/c.db", false);
    REQUIRE(db);
    auto d = schemaDifferences(*db);
    REQUIRE(d);
    CHECK(d->empty());
    auto v = db->prepare("PRAGMA user_version");
    REQUIRE(v);
    REQUIRE(v->step() == SQLITE_ROW);
    CHECK(v->columnInt(0) == kSchemaVersion);
}

TEST_CASE("a NOT NULL column more is refused at open, naming it", "[collector][schema]")
{
    TempDir dir;
    // As after a rollback from a newer collector: today's OR IGNORE stored
    // nothing into it and acked everything.
    std::string path = changedStore(dir, "ALTER TABLE reports ADD COLUMN tenant TEXT NOT NULL "
                                         "DEFAULT 'x'; UPDATE reports SET tenant = 'x'");
    // SQLite's ADD COLUMN needs a default; a table made anew need not have one.
    auto db = SqliteDb::open(path, false);
    REQUIRE(db->exec("PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql = replace(sql, "
                     "'DEFAULT ''x''', '') WHERE name = 'reports'; PRAGMA writable_schema = OFF"));
    db = SqliteDb::open(path, false); // the schema is read anew
    std::string m = refusal(path);
    CHECK_THAT(m, Catch::Contains("not the one this collector writes"));
    CHECK_THAT(m, Catch::Contains("column tenant TEXT NOT NULL (no default) is not one"));
}

TEST_CASE("changed constraints, triggers and types are refused, each named", "[collector][schema]")
{
    struct Case {
        const char *sql, *says;
    } cases[] = {
        {"CREATE TRIGGER quiet BEFORE INSERT ON reports BEGIN SELECT RAISE(IGNORE); END",
         "trigger quiet on table reports"},
        {"CREATE UNIQUE INDEX one_per_stream ON reports (vm, stream)", "UNIQUE (vm, stream)"},
        {"DROP INDEX reports_by_vm; ALTER TABLE reports RENAME TO old; "
         "CREATE TABLE reports (id INTEGER PRIMARY KEY AUTOINCREMENT, vm TEXT NOT NULL, "
         "stream TEXT NOT NULL, seq INTEGER NOT NULL, received_at INTEGER NOT NULL, "
         "reason TEXT NOT NULL, verdict TEXT NOT NULL CHECK (verdict != ''), report TEXT NOT "
         "NULL, metrics TEXT, bytes INTEGER NOT NULL DEFAULT 0, UNIQUE (vm, stream, seq))",
         "reports: a CHECK constraint"},
        {"ALTER TABLE vms RENAME TO old; CREATE TABLE vms (vm TEXT PRIMARY KEY, "
         "socket TEXT NOT NULL DEFAULT '', machine_id TEXT NOT NULL DEFAULT '', hostname TEXT "
         "NOT NULL DEFAULT '', agent_version TEXT NOT NULL DEFAULT '', stream TEXT NOT NULL "
         "DEFAULT '', seq TEXT NOT NULL DEFAULT 0, verdict TEXT NOT NULL DEFAULT '', "
         "dropped_reports INTEGER NOT NULL DEFAULT 0, last_report_at INTEGER NOT NULL DEFAULT 0, "
         "last_seen_at INTEGER NOT NULL DEFAULT 0, host_facts TEXT, report_rows INTEGER NOT NULL "
         "DEFAULT 0, report_bytes INTEGER NOT NULL DEFAULT 0)",
         "vms: column seq is TEXT NOT NULL DEFAULT 0 here, INTEGER NOT NULL DEFAULT 0"},
        {"PRAGMA user_version = 3", "written by a newer collector (schema version 3"},
    };
    for (const auto &c : cases) {
        INFO(c.sql);
        TempDir dir;
        CHECK_THAT(refusal(changedStore(dir, c.sql)), Catch::Contains(c.says));
    }
}

TEST_CASE("a table that touches no store table is left alone", "[collector][schema]")
{
    TempDir dir;
    std::string path = changedStore(
        dir, "CREATE TABLE notes (t TEXT); CREATE VIEW short AS SELECT * FROM notes; "
             "CREATE INDEX by_t ON notes (t); CREATE TRIGGER echo AFTER INSERT ON notes BEGIN "
             "INSERT INTO notes VALUES ('again') ; END");
    auto s = Store::open(path);
    REQUIRE(s);
    CHECK(s->addReport("vm1", schemaReport(2), 2).value());
}

TEST_CASE("a store from before v0.1.0 is refused as too old", "[collector][schema]")
{
    TempDir dir;
    std::string path = dir.path() + "/c.db";
    {
        auto db = SqliteDb::open(path, false);
        REQUIRE(db);
        // The pre-release schema: no bytes, no counters.
        REQUIRE(db->exec(
            "CREATE TABLE vms (vm TEXT PRIMARY KEY, socket TEXT NOT NULL DEFAULT '', "
            "machine_id TEXT NOT NULL DEFAULT '', hostname TEXT NOT NULL DEFAULT '', "
            "agent_version TEXT NOT NULL DEFAULT '', stream TEXT NOT NULL DEFAULT '', "
            "seq INTEGER NOT NULL DEFAULT 0, verdict TEXT NOT NULL DEFAULT '', "
            "dropped_reports INTEGER NOT NULL DEFAULT 0, last_report_at INTEGER NOT NULL "
            "DEFAULT 0, last_seen_at INTEGER NOT NULL DEFAULT 0, host_facts TEXT);"
            "CREATE TABLE reports (id INTEGER PRIMARY KEY AUTOINCREMENT, vm TEXT NOT NULL, "
            "stream TEXT NOT NULL, seq INTEGER NOT NULL, received_at INTEGER NOT NULL, "
            "reason TEXT NOT NULL, verdict TEXT NOT NULL, report TEXT NOT NULL, metrics TEXT, "
            "UNIQUE (vm, stream, seq));"
            "INSERT INTO reports (vm, stream, seq, received_at, reason, verdict, report) "
            "VALUES ('old', 'aa', 1, 1, 'start', 'x', '{}')"));
    }
    std::string m = refusal(path);
    CHECK_THAT(m, Catch::Contains("too old"));
    CHECK_THAT(m, Catch::Contains("reports.bytes"));
    CHECK_THAT(m, Catch::Contains("v0.1.0"));
    // Refused, not changed: the row is still there.
    auto db = SqliteDb::open(path, true);
    auto n = db->prepare("SELECT count(*) FROM reports");
    REQUIRE(n->step() == SQLITE_ROW);
    CHECK(n->columnInt(0) == 1);
}

TEST_CASE("an insert that fails for any reason but a resend fails the batch", "[collector][schema]")
{
    // A store that passed the check and was changed afterwards, while open:
    // the insert's failure must reach the caller, not read as "a resend".
    TempDir dir;
    std::string path = dir.path() + "/c.db";
    StoreOptions behindTheRecheck;
    behindTheRecheck.recheckSchema = false; // the insert's own failure, not the recheck's
    auto s = Store::open(path, behindTheRecheck);
    REQUIRE(s);
    REQUIRE(s->addReport("vm1", schemaReport(1), 1));
    auto other = SqliteDb::open(path, false);
    // One NOT NULL column more, without a default, as a newer collector's.
    REQUIRE(other->exec(
        "ALTER TABLE reports RENAME TO old; CREATE TABLE reports (id INTEGER PRIMARY KEY "
        "AUTOINCREMENT, vm TEXT NOT NULL, stream TEXT NOT NULL, seq INTEGER NOT NULL, "
        "received_at INTEGER NOT NULL, reason TEXT NOT NULL, verdict TEXT NOT NULL, report TEXT "
        "NOT NULL, metrics TEXT, bytes INTEGER NOT NULL DEFAULT 0, tenant TEXT NOT NULL, "
        "UNIQUE (vm, stream, seq)); INSERT INTO reports SELECT *, 't' FROM old"));
    auto r = s->addReport("vm1", schemaReport(2), 2);
    REQUIRE_FALSE(r);
    CHECK_THAT(r.error().message, Catch::Contains("NOT NULL constraint failed: reports.tenant"));
    // (A resend fails too: SQLite checks NOT NULL before UNIQUE. The check
    // at open keeps such a table from being written at all.)
}
