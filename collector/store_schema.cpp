// The store's tables: created, migrated from older collectors, and checked
// against what this collector writes before it writes anything.
#include "collector/store_schema.h"

#include <algorithm>
#include <cctype>
#include <cerrno>

#include <fmt/format.h>

#include "collector/store_objects.h"

namespace daxprobe::collector
{

namespace
{

constexpr const char *kSchema = R"sql(
CREATE TABLE IF NOT EXISTS vms (
  vm TEXT PRIMARY KEY,
  socket TEXT NOT NULL DEFAULT '',
  machine_id TEXT NOT NULL DEFAULT '',
  hostname TEXT NOT NULL DEFAULT '',
  agent_version TEXT NOT NULL DEFAULT '',
  stream TEXT NOT NULL DEFAULT '',
  seq INTEGER NOT NULL DEFAULT 0,
  verdict TEXT NOT NULL DEFAULT '',
  dropped_reports INTEGER NOT NULL DEFAULT 0,
  last_report_at INTEGER NOT NULL DEFAULT 0,
  last_seen_at INTEGER NOT NULL DEFAULT 0,
  host_facts TEXT,
  report_rows INTEGER NOT NULL DEFAULT 0,
  report_bytes INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS reports (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  vm TEXT NOT NULL,
  stream TEXT NOT NULL,
  seq INTEGER NOT NULL,
  received_at INTEGER NOT NULL,
  reason TEXT NOT NULL,
  verdict TEXT NOT NULL,
  report TEXT NOT NULL,
  metrics TEXT,
  bytes INTEGER NOT NULL DEFAULT 0,
  UNIQUE (vm, stream, seq)
);
CREATE INDEX IF NOT EXISTS reports_by_vm ON reports (vm, id);
)sql";

// v0.1.0 (schema 1) had no counters: add them and count once.
constexpr const char *kAddCounters = R"sql(
ALTER TABLE vms ADD COLUMN report_rows INTEGER NOT NULL DEFAULT 0;
ALTER TABLE vms ADD COLUMN report_bytes INTEGER NOT NULL DEFAULT 0;
UPDATE vms SET
  report_rows = (SELECT COUNT(*) FROM reports r WHERE r.vm = vms.vm),
  report_bytes = (SELECT COALESCE(SUM(bytes), 0) FROM reports r WHERE r.vm = vms.vm);
)sql";

// What of a table decides an insert's outcome, each item as text.
struct TableShape {
    bool exists = false;
    std::vector<std::pair<std::string, std::string>> columns; // name, its definition
    std::vector<std::string> traits; // unique constraints, CHECK, STRICT...
};

std::string upper(std::string s)
{
    for (char &c : s)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

// True if the table's SQL has the keyword CHECK outside quotes (SQLite
// reports CHECK constraints nowhere else).
bool hasCheck(std::string_view sql)
{
    for (std::size_t i = 0; i < sql.size();) {
        char c = sql[i];
        if (c == '\'' || c == '"' || c == '`' || c == '[') {
            char close = c == '[' ? ']' : c;
            auto end = sql.find(close, i + 1);
            i = end == std::string_view::npos ? sql.size() : end + 1;
        } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
            std::size_t j = i;
            while (j < sql.size() &&
                   (std::isalnum(static_cast<unsigned char>(sql[j])) || sql[j] == '_'))
                ++j;
            if (upper(std::string(sql.substr(i, j - i))) == "CHECK")
                return true;
            i = j;
        } else {
            ++i;
        }
    }
    return false;
}

Result<TableShape> shapeOf(SqliteDb &db, const char *table)
{
    TableShape t;
    auto cols = db.prepare("SELECT name, upper(type), \"notnull\", dflt_value, pk, hidden "
                           "FROM pragma_table_xinfo(?1) ORDER BY cid");
    if (!cols)
        return tl::unexpected(cols.error());
    cols->bind(1, std::string_view(table));
    while (cols->step() == SQLITE_ROW) {
        t.exists = true;
        std::string def = cols->columnText(1);
        if (cols->columnInt(2))
            def += " NOT NULL";
        def += cols->columnIsNull(3) ? " (no default)" : " DEFAULT " + cols->columnText(3);
        if (cols->columnInt(4))
            def += " PRIMARY KEY";
        if (cols->columnInt(5))
            def += " GENERATED";
        t.columns.emplace_back(cols->columnText(0), def);
    }
    if (!t.exists)
        return t;
    auto idx = db.prepare("SELECT name, partial FROM pragma_index_list(?1) WHERE \"unique\" = 1");
    if (!idx)
        return tl::unexpected(idx.error());
    idx->bind(1, std::string_view(table));
    while (idx->step() == SQLITE_ROW) {
        auto keys = db.prepare("SELECT name, coll FROM pragma_index_xinfo(?1) WHERE key = 1 "
                               "ORDER BY seqno");
        if (!keys)
            return tl::unexpected(keys.error());
        keys->bind(1, idx->columnView(0));
        std::string u = "UNIQUE (";
        for (int k = 0; keys->step() == SQLITE_ROW; ++k) {
            u += (k ? ", " : "") + keys->columnText(0);
            if (upper(keys->columnText(1)) != "BINARY")
                u += " COLLATE " + keys->columnText(1);
        }
        u += idx->columnInt(1) ? ") WHERE ..." : ")";
        t.traits.push_back(u);
    }
    // Triggers are named with every other object that touches the table
    // (store_objects.cpp).
    auto other =
        db.prepare("SELECT 'a foreign key on ' || \"from\" FROM pragma_foreign_key_list(?1) "
                   "UNION ALL SELECT 'STRICT' FROM pragma_table_list(?1) WHERE strict "
                   "UNION ALL SELECT 'WITHOUT ROWID' FROM pragma_table_list(?1) WHERE wr");
    if (!other)
        return tl::unexpected(other.error());
    other->bind(1, std::string_view(table));
    while (other->step() == SQLITE_ROW)
        t.traits.push_back(other->columnText(0));
    // As SQLite finds a table: "REPORTS" is `reports`.
    auto sql = db.prepare(
        "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?1 COLLATE NOCASE");
    if (!sql)
        return tl::unexpected(sql.error());
    sql->bind(1, std::string_view(table));
    if (sql->step() == SQLITE_ROW && hasCheck(sql->columnView(0)))
        t.traits.push_back("a CHECK constraint");
    std::sort(t.traits.begin(), t.traits.end());
    return t;
}

// The store this collector writes, made in memory: the CREATE statements
// are the one description of it.
Result<SqliteDb> referenceStore()
{
    auto mem = SqliteDb::open(":memory:", false);
    if (!mem)
        return tl::unexpected(mem.error());
    if (auto r = mem->exec(kSchema); !r)
        return tl::unexpected(r.error());
    return mem;
}

Result<std::vector<TableShape>> expectedShapes(SqliteDb &reference)
{
    std::vector<TableShape> out;
    for (const char *t : kStoreTables) {
        auto s = shapeOf(reference, t);
        if (!s)
            return tl::unexpected(s.error());
        out.push_back(std::move(*s));
    }
    return out;
}

struct Differences {
    std::vector<std::string> lines;
    std::vector<std::string> missingColumns; // "table.column"
    bool onlyMissing = true;                 // nothing but columns this store lacks
};

Result<Differences> differences(SqliteDb &db)
{
    auto reference = referenceStore();
    if (!reference)
        return tl::unexpected(reference.error());
    auto want = expectedShapes(*reference);
    if (!want)
        return tl::unexpected(want.error());
    Differences d;
    auto other = [&](std::string line) {
        d.lines.push_back(std::move(line));
        d.onlyMissing = false;
    };
    for (std::size_t i = 0; i < std::size(kStoreTables); ++i) {
        const char *table = kStoreTables[i];
        auto have = shapeOf(db, table);
        if (!have)
            return tl::unexpected(have.error());
        const TableShape &w = (*want)[i];
        if (!have->exists) {
            other(fmt::format("{}: no such table", table));
            continue;
        }
        // No structured bindings here: clang 14 (the fuzz build) cannot
        // capture them in a lambda.
        for (const auto &column : w.columns) {
            const auto &name = column.first;
            const auto &def = column.second;
            auto it = std::find_if(have->columns.begin(), have->columns.end(),
                                   [&](const auto &c) { return c.first == name; });
            if (it == have->columns.end()) {
                d.lines.push_back(fmt::format("{}: column {} is missing", table, name));
                d.missingColumns.push_back(fmt::format("{}.{}", table, name));
            } else if (it->second != def) {
                other(fmt::format("{}: column {} is {} here, {} in this collector", table, name,
                                  it->second, def));
            }
        }
        for (const auto &column : have->columns)
            if (std::none_of(w.columns.begin(), w.columns.end(),
                             [&](const auto &c) { return c.first == column.first; }))
                other(fmt::format("{}: column {} {} is not one this collector writes", table,
                                  column.first, column.second));
        for (const auto &t : have->traits)
            if (std::find(w.traits.begin(), w.traits.end(), t) == w.traits.end())
                other(fmt::format("{}: {} that this collector does not make", table, t));
        for (const auto &t : w.traits)
            if (std::find(have->traits.begin(), have->traits.end(), t) == have->traits.end())
                other(fmt::format("{}: lacks {}", table, t));
    }
    auto foreign = foreignObjects(db, *reference);
    if (!foreign)
        return tl::unexpected(foreign.error());
    for (auto &line : *foreign)
        other(std::move(line));
    return d;
}

bool isV010(const Differences &d)
{
    return d.onlyMissing &&
           d.missingColumns == std::vector<std::string>{"vms.report_rows", "vms.report_bytes"};
}

Result<void> migrateV010(SqliteDb &db)
{
    if (auto r = db.exec("BEGIN IMMEDIATE"); !r)
        return r;
    if (auto r = db.exec(kAddCounters); !r) {
        (void)db.exec("ROLLBACK");
        return r;
    }
    return db.exec("COMMIT");
}

std::string joined(const std::vector<std::string> &lines, std::string_view sep)
{
    std::string out;
    for (const auto &l : lines)
        out += (out.empty() ? "" : std::string(sep)) + l;
    return out;
}

} // namespace

Result<std::vector<std::string>> schemaDifferences(SqliteDb &db)
{
    auto d = differences(db);
    if (!d)
        return tl::unexpected(d.error());
    return d->lines;
}

Result<void> prepareSchema(SqliteDb &db, const std::string &path)
{
    auto version = db.prepare("PRAGMA user_version");
    if (!version)
        return tl::unexpected(version.error());
    std::int64_t v = version->step() == SQLITE_ROW ? version->columnInt(0) : 0;
    version = Statement();
    if (v > kSchemaVersion)
        return failf(EPROTO,
                     "{}: written by a newer collector (schema version {}; this one writes {}): "
                     "refusing to write to it; run that collector, or move the store aside",
                     path, v, kSchemaVersion);
    // Any object by a store table's name, as SQLite compares names: a
    // "REPORTS" table is the store's reports table, and is checked.
    auto tables = db.prepare("SELECT count(*) FROM sqlite_schema WHERE name COLLATE NOCASE IN "
                             "('vms', 'reports')");
    if (!tables)
        return tl::unexpected(tables.error());
    bool fresh = tables->step() == SQLITE_ROW && tables->columnInt(0) == 0;
    tables = Statement();
    if (!fresh) {
        auto d = differences(db);
        if (!d)
            return tl::unexpected(d.error());
        if (isV010(*d)) {
            if (auto r = migrateV010(db); !r)
                return r;
            d = differences(db);
            if (!d)
                return tl::unexpected(d.error());
        }
        if (!d->lines.empty() && d->onlyMissing)
            return failf(EPROTO,
                         "{}: the store is too old to open: it lacks {}, so a collector before "
                         "v0.1.0 wrote it. This collector migrates stores of v0.1.0 and later; "
                         "no version migrates an older one: move it aside (a new store is then "
                         "started) and read it with sqlite3",
                         path, joined(d->missingColumns, ", "));
        if (!d->lines.empty())
            return failf(EPROTO,
                         "{}: the store's schema is not the one this collector writes (a newer "
                         "collector's, or changed by hand): {}. Refusing to store reports there "
                         "(they could fail or be lost): run the collector that wrote it, undo "
                         "the change, or move the store aside",
                         path, joined(d->lines, "; "));
    }
    // IF NOT EXISTS: creates the tables of a fresh store, and a plain index
    // someone dropped.
    if (auto r = db.exec(kSchema); !r)
        return r;
    return db.exec(fmt::format("PRAGMA user_version = {}", kSchemaVersion).c_str());
}

} // namespace daxprobe::collector
