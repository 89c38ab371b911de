// The store as SQLite sees it (issue 45, item 1): tables found whatever the
// case of their names, everything that touches them refused at open and
// named, an insert that stores nothing never acked, and a spent
// AUTOINCREMENT sequence named for what it is.
#include <catch2/catch.hpp>

#include "collector/store.h"
#include "tests/unit/collector/tmpdir.h"

using namespace daxprobe;
using namespace daxprobe::collector;

namespace
{

protocol::ReportEnvelope identityReport(std::uint64_t seq, const char *code = "dax_verified")
{
    return {"aa", seq, "interval", {{"verdict", {{"code", code}}}}, {{"x", seq}}, 0};
}

// A store with one report, then changed by `sql` from another connection.
std::string storeChangedBy(const TempDir &dir, const char *sql)
{
    std::string path = dir.path() + "/c.db";
    {
        auto s = Store::open(path);
        REQUIRE(s);
        REQUIRE(s->addReport("vm1", identityReport(1), 1).value());
    }
    auto db = SqliteDb::open(path, false);
    REQUIRE(db);
    REQUIRE(db->exec(sql));
    return path;
}

std::int64_t count(const std::string &path, const char *sql)
{
    auto db = SqliteDb::open(path, true);
    REQUIRE(db);
    auto q = db->prepare(sql);
    REQUIRE(q);
    REQUIRE(q->step() == SQLITE_ROW);
    return q->columnInt(0);
}

// The store's per-row checks alone, without the schema recheck in front.
StoreOptions rowChecksOnly()
{
    StoreOptions o;
    o.recheckSchema = false;
    return o;
}

} // namespace

TEST_CASE("whatever touches the store's tables is refused at open, named, in any case",
          "[collector][schema][identity]")
{
    struct Case {
        const char *sql, *says;
    } cases[] = {
        // Issue 45's: acked 28-29 reports, stored 0.
        {"CREATE TRIGGER eat BEFORE INSERT ON REPORTS BEGIN SELECT RAISE(IGNORE); END",
         "trigger eat on table REPORTS"},
        {"CREATE TRIGGER gone AFTER INSERT ON Reports BEGIN DELETE FROM reports WHERE id = "
         "new.id; END",
         "trigger gone on table Reports"},
        // Issue 45's: `query` said dax_verified for a guest with problems.
        {"CREATE TRIGGER lie AFTER UPDATE ON VMS BEGIN UPDATE vms SET verdict = 'dax_verified' "
         "WHERE vm = new.vm; END",
         "trigger lie on table VMS"},
        {"CREATE INDEX by_seq ON reports (seq)", "index by_seq on table reports"},
        {"CREATE VIEW latest AS SELECT * FROM Vms", "view latest reads a store table"},
        {"CREATE TABLE notes (t TEXT); CREATE TRIGGER wipe AFTER INSERT ON notes BEGIN DELETE "
         "FROM REPORTS; END",
         "trigger wipe (on notes) reads or writes"},
        {"CREATE TABLE owners (vm TEXT REFERENCES VMS (vm))", "table owners has a foreign key"},
    };
    for (const auto &c : cases) {
        INFO(c.sql);
        TempDir dir;
        auto s = Store::open(storeChangedBy(dir, c.sql));
        REQUIRE_FALSE(s);
        CHECK_THAT(s.error().message, Catch::Contains("not the one this collector writes"));
        CHECK_THAT(s.error().message, Catch::Contains(c.says));
    }
}

TEST_CASE("tables named \"VMS\" and \"REPORTS\" are the store's, and are checked",
          "[collector][schema][identity]")
{
    // Once, a store without a table named exactly `vms` was taken for a new
    // one, and whatever its tables were went unchecked.
    TempDir dir;
    std::string path = dir.path() + "/c.db";
    {
        auto db = SqliteDb::open(path, false);
        REQUIRE(db);
        REQUIRE(db->exec(
            "CREATE TABLE \"VMS\" (vm TEXT PRIMARY KEY, socket TEXT NOT NULL DEFAULT '', "
            "machine_id TEXT NOT NULL DEFAULT '', hostname TEXT NOT NULL DEFAULT '', "
            "agent_version TEXT NOT NULL DEFAULT '', stream TEXT NOT NULL DEFAULT '', "
            "seq INTEGER NOT NULL DEFAULT 0, verdict TEXT NOT NULL DEFAULT '', "
            "dropped_reports INTEGER NOT NULL DEFAULT 0, last_report_at INTEGER NOT NULL "
            "DEFAULT 0, last_seen_at INTEGER NOT NULL DEFAULT 0, host_facts TEXT, report_rows "
            "INTEGER NOT NULL DEFAULT 0, report_bytes INTEGER NOT NULL DEFAULT 0, tenant TEXT);"
            "CREATE TABLE \"REPORTS\" (id INTEGER PRIMARY KEY AUTOINCREMENT, vm TEXT NOT NULL, "
            "stream TEXT NOT NULL, seq INTEGER NOT NULL, received_at INTEGER NOT NULL, "
            "reason TEXT NOT NULL, verdict TEXT NOT NULL, report TEXT NOT NULL, metrics TEXT, "
            "bytes INTEGER NOT NULL DEFAULT 0, UNIQUE (vm, stream, seq))"));
    }
    auto s = Store::open(path);
    REQUIRE_FALSE(s);
    CHECK_THAT(s.error().message, Catch::Contains("vms: column tenant TEXT (no default) is not"));
}

TEST_CASE("a CHECK in a table named \"REPORTS\" is found", "[collector][schema][identity]")
{
    // SQLite reports CHECK constraints only in the table's SQL, looked up by
    // name: as SQLite compares names, or the "REPORTS" table's is missed.
    TempDir dir;
    std::string path = storeChangedBy(
        dir, "DROP INDEX reports_by_vm; ALTER TABLE reports RENAME TO old; "
             "CREATE TABLE \"REPORTS\" (id INTEGER PRIMARY KEY AUTOINCREMENT, vm TEXT NOT NULL, "
             "stream TEXT NOT NULL, seq INTEGER NOT NULL, received_at INTEGER NOT NULL, "
             "reason TEXT NOT NULL, verdict TEXT NOT NULL CHECK (verdict != 'problems_found'), "
             "report TEXT NOT NULL, metrics TEXT, bytes INTEGER NOT NULL DEFAULT 0, "
             "UNIQUE (vm, stream, seq)); INSERT INTO \"REPORTS\" SELECT * FROM old; "
             "DROP TABLE old; CREATE INDEX reports_by_vm ON \"REPORTS\" (vm, id)");
    auto s = Store::open(path);
    REQUIRE_FALSE(s);
    CHECK_THAT(s.error().message, Catch::Contains("reports: a CHECK constraint"));
}

TEST_CASE("an insert that a trigger added under the collector swallows is never a receipt",
          "[collector][store][identity]")
{
    struct Case {
        const char *sql, *says;
    } cases[] = {
        {"CREATE TRIGGER eat BEFORE INSERT ON REPORTS BEGIN SELECT RAISE(IGNORE); END",
         "stored nothing, and no row has its (vm, stream, seq)"},
        {"CREATE TRIGGER gone AFTER INSERT ON Reports BEGIN DELETE FROM reports WHERE id = "
         "new.id; END",
         "was inserted and is gone"},
    };
    for (const auto &c : cases) {
        INFO(c.sql);
        TempDir dir;
        std::string path = dir.path() + "/c.db";
        auto s = Store::open(path, rowChecksOnly());
        REQUIRE(s);
        REQUIRE(s->addReport("vm1", identityReport(1), 1).value());
        auto other = SqliteDb::open(path, false);
        REQUIRE(other->exec(c.sql));
        auto r = s->addReport("vm1", identityReport(2), 2);
        REQUIRE_FALSE(r); // not Stored, not Duplicate: nothing to ack
        CHECK_THAT(r.error().message, Catch::Contains(c.says));
        CHECK(count(path, "SELECT count(*) FROM reports") == 1);
        // A resend of what is stored is still a resend.
        CHECK(s->addReport("vm1", identityReport(1), 3).value() == false);
    }
}

TEST_CASE("a schema changed under the running collector stops storing until undone",
          "[collector][store][identity]")
{
    TempDir dir;
    std::string path = dir.path() + "/c.db";
    auto s = Store::open(path);
    REQUIRE(s);
    REQUIRE(s->addReport("vm1", identityReport(1), 1).value());
    auto other = SqliteDb::open(path, false);
    // Rewrites what `query` shows; no per-row check could see it.
    REQUIRE(other->exec("CREATE TRIGGER lie AFTER UPDATE ON VMS BEGIN UPDATE vms SET "
                        "verdict = 'dax_verified' WHERE vm = new.vm; END"));
    auto r = s->addReport("vm1", identityReport(2, "problems_found"), 2);
    REQUIRE_FALSE(r);
    CHECK_THAT(r.error().message, Catch::Contains("changed while the collector runs: trigger "
                                                  "lie on table VMS"));
    CHECK(count(path, "SELECT count(*) FROM reports") == 1);
    REQUIRE(other->exec("DROP TRIGGER lie"));
    CHECK(s->addReport("vm1", identityReport(2, "problems_found"), 3).value());
    auto db = SqliteDb::open(path, true);
    auto v = db->prepare("SELECT verdict FROM vms WHERE vm = 'vm1'");
    REQUIRE(v->step() == SQLITE_ROW);
    CHECK(v->columnText(0) == "problems_found");
}

TEST_CASE("the insert passes over a conflict on the resend key only",
          "[collector][store][identity]")
{
    // A second unique index added under a running collector: a report that
    // conflicts on it is not a resend, and must fail, naming the index.
    TempDir dir;
    std::string path = dir.path() + "/c.db";
    auto s = Store::open(path, rowChecksOnly());
    REQUIRE(s);
    REQUIRE(s->addReport("vm1", identityReport(1), 1).value());
    auto other = SqliteDb::open(path, false);
    REQUIRE(other->exec("CREATE UNIQUE INDEX one_per_vm ON reports (vm)"));
    auto r = s->addReport("vm1", identityReport(2), 2);
    REQUIRE_FALSE(r);
    CHECK_THAT(r.error().message, Catch::Contains("UNIQUE constraint failed: reports.vm"));
}

TEST_CASE("a spent AUTOINCREMENT sequence is refused at open, naming the table and the way on",
          "[collector][store][identity][full]")
{
    TempDir dir;
    std::string path = storeChangedBy(
        dir, "UPDATE sqlite_sequence SET seq = 9223372036854775807 WHERE name = 'reports'");
    auto s = Store::open(path);
    REQUIRE_FALSE(s);
    CHECK_THAT(s.error().message,
               Catch::Contains("the AUTOINCREMENT sequence of table reports reached its maximum"));
    CHECK_THAT(s.error().message, Catch::Contains("set it back to the table's highest id, 1"));
    CHECK_THAT(s.error().message,
               Catch::Contains("UPDATE sqlite_sequence SET seq = (SELECT max(id) "
                               "FROM reports) WHERE name = 'reports'"));
    // The way on it names works: the store opens and stores again.
    {
        auto db = SqliteDb::open(path, false);
        REQUIRE(db->exec("UPDATE sqlite_sequence SET seq = (SELECT max(id) FROM reports) "
                         "WHERE name = 'reports'"));
    }
    s = Store::open(path);
    REQUIRE(s);
    CHECK(s->addReport("vm1", identityReport(2), 2).value());
    CHECK(count(path, "SELECT count(*) FROM reports") == 2);
}

TEST_CASE("a row holding the highest id is refused at open: only moving the store helps",
          "[collector][store][identity][full]")
{
    TempDir dir;
    std::string path = storeChangedBy(
        dir, "INSERT INTO reports (id, vm, stream, seq, received_at, reason, verdict, report) "
             "VALUES (9223372036854775807, 'vm1', 'aa', 9, 1, 'x', 'x', '{}')");
    auto s = Store::open(path);
    REQUIRE_FALSE(s);
    CHECK_THAT(s.error().message, Catch::Contains("sequence of table reports reached its maximum"));
    CHECK_THAT(s.error().message, Catch::Contains("a row holds the highest id itself: move"));
}

TEST_CASE("a sequence spent under the collector says so, and the store recovers once reset",
          "[collector][store][identity][full]")
{
    TempDir dir;
    std::string path = dir.path() + "/c.db";
    auto s = Store::open(path);
    REQUIRE(s);
    REQUIRE(s->addReport("vm1", identityReport(1), 1).value());
    auto other = SqliteDb::open(path, false);
    REQUIRE(
        other->exec("UPDATE sqlite_sequence SET seq = 9223372036854775807 WHERE name = 'reports'"));
    auto r = s->addReport("vm1", identityReport(2), 2);
    REQUIRE_FALSE(r);
    // Not SQLite's "database or disk is full" alone: what is full.
    CHECK_THAT(r.error().message,
               Catch::Contains("the AUTOINCREMENT sequence of table reports reached its maximum"));
    REQUIRE(other->exec("UPDATE sqlite_sequence SET seq = (SELECT max(id) FROM reports) "
                        "WHERE name = 'reports'"));
    CHECK(s->addReport("vm1", identityReport(2), 3).value());
}
