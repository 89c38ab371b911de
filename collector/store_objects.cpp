// What else in the database touches the store's tables, found as SQLite
// sees it: names compared as SQLite compares them, and what a view or a
// trigger reads or writes told by SQLite's authorizer while it compiles
// them, never by reading their SQL ourselves.
#include "collector/store_objects.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

namespace daxprobe::collector
{

namespace
{

struct SchemaObject {
    std::string type, name, table;
};

Result<std::vector<SchemaObject>> objectsOf(SqliteDb &db)
{
    auto q = db.prepare("SELECT type, name, tbl_name FROM sqlite_schema ORDER BY type, name");
    if (!q)
        return tl::unexpected(q.error());
    std::vector<SchemaObject> out;
    while (q->step() == SQLITE_ROW)
        out.push_back({q->columnText(0), q->columnText(1), q->columnText(2)});
    return out;
}

std::string quoted(std::string_view name)
{
    std::string q = "\"";
    for (char c : name)
        q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

// Collects, while a statement compiles, the view or trigger (the innermost
// one: SQLite's fourth argument) through which a store table is reached.
struct Reach {
    std::set<std::string> through;
};

int noteReach(void *arg, int action, const char *a1, const char *, const char *, const char *inner)
{
    switch (action) {
    case SQLITE_READ:
    case SQLITE_INSERT:
    case SQLITE_UPDATE:
    case SQLITE_DELETE:
        if (a1 && inner && isStoreTable(a1))
            static_cast<Reach *>(arg)->through.insert(inner);
        break;
    default:
        break;
    }
    return SQLITE_OK;
}

// Statements that would fire every trigger of `table` (or select a view),
// compiled and never run: compiling a statement compiles its triggers.
Result<std::vector<std::string>> firingStatements(SqliteDb &db, const std::string &table)
{
    std::string t = "main." + quoted(table);
    std::vector<std::string> out = {"SELECT * FROM " + t, "INSERT INTO " + t + " DEFAULT VALUES",
                                    "DELETE FROM " + t};
    auto cols = db.prepare("SELECT name FROM pragma_table_info(?1)");
    if (!cols)
        return tl::unexpected(cols.error());
    cols->bind(1, table);
    std::string set;
    while (cols->step() == SQLITE_ROW) {
        std::string c = quoted(cols->columnView(0));
        set += (set.empty() ? "" : ", ") + c + " = " + c;
    }
    if (!set.empty())
        out.push_back("UPDATE " + t + " SET " + set);
    return out;
}

} // namespace

bool isStoreTable(std::string_view name)
{
    std::string n(name);
    return std::any_of(std::begin(kStoreTables), std::end(kStoreTables),
                       [&](const char *t) { return sqlite3_stricmp(n.c_str(), t) == 0; });
}

Result<std::vector<std::string>> foreignObjects(SqliteDb &db, SqliteDb &reference)
{
    auto have = objectsOf(db);
    if (!have)
        return tl::unexpected(have.error());
    auto want = objectsOf(reference);
    if (!want)
        return tl::unexpected(want.error());
    auto expected = [&](const SchemaObject &o) {
        return std::any_of(want->begin(), want->end(), [&](const SchemaObject &w) {
            return w.type == o.type && sqlite3_stricmp(w.name.c_str(), o.name.c_str()) == 0;
        });
    };

    // Which views and triggers reach a store table: compile what would
    // run each of them, with the authorizer watching.
    Reach reach;
    std::set<std::string> compiled, unexamined;
    sqlite3_set_authorizer(db.get(), noteReach, &reach);
    for (const auto &o : *have) {
        if ((o.type != "trigger" && o.type != "view") || isStoreTable(o.table) ||
            !compiled.insert(o.table).second)
            continue;
        auto statements = firingStatements(db, o.table);
        if (!statements) {
            sqlite3_set_authorizer(db.get(), nullptr, nullptr);
            return tl::unexpected(statements.error());
        }
        bool any = false;
        for (const auto &sql : *statements)
            any = db.prepare(sql).has_value() || any;
        if (!any)
            unexamined.insert(o.table);
    }
    sqlite3_set_authorizer(db.get(), nullptr, nullptr);

    std::vector<std::string> lines;
    for (const auto &o : *have) {
        if (expected(o))
            continue;
        if (isStoreTable(o.table) && o.type != "table")
            lines.push_back(fmt::format("{} {} on table {}", o.type, o.name, o.table));
        else if (reach.through.count(o.name) && o.type == "view")
            lines.push_back(fmt::format("view {} reads a store table", o.name));
        else if (reach.through.count(o.name))
            lines.push_back(fmt::format("{} {} (on {}) reads or writes a store table", o.type,
                                        o.name, o.table));
        else if (o.type == "trigger" && unexamined.count(o.table))
            lines.push_back(fmt::format("trigger {} on {}: what it touches could not be told",
                                        o.name, o.table));
    }
    // A table whose foreign key refers to a store table: with foreign keys
    // on, it could refuse or cascade the trim's deletes.
    auto fk = db.prepare("SELECT s.name, f.\"table\" FROM sqlite_schema s, "
                         "pragma_foreign_key_list(s.name) f WHERE s.type = 'table' "
                         "ORDER BY s.name");
    if (!fk)
        return tl::unexpected(fk.error());
    while (fk->step() == SQLITE_ROW)
        if (isStoreTable(fk->columnView(1)) && !isStoreTable(fk->columnView(0)))
            lines.push_back(fmt::format("table {} has a foreign key to {}", fk->columnText(0),
                                        fk->columnText(1)));
    return lines;
}

} // namespace daxprobe::collector
