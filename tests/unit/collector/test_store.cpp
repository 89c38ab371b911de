#include <unistd.h>

#include <catch2/catch.hpp>

#include "collector/store.h"
#include "tests/unit/collector/tmpdir.h"

using namespace daxprobe;
using namespace daxprobe::collector;

namespace
{
protocol::ReportEnvelope report(std::uint64_t seq, const char *verdict = "dax_verified",
                                const char *stream = "aa")
{
    return {stream, seq, "interval", {{"verdict", {{"code", verdict}}}}, {{"x", seq}}, 0};
}
} // namespace

TEST_CASE("store dedupes by (vm, stream, seq)", "[collector][store]")
{
    TempDir dir;
    auto s = Store::open(dir.path() + "/c.db");
    REQUIRE(s);
    CHECK(s->addReport("vm1", report(1), 100).value() == true);
    CHECK(s->addReport("vm1", report(1), 101).value() == false);
    CHECK(s->addReport("vm1", report(1, "x", "bb"), 102).value() == true); // new stream
    CHECK(s->addReport("vm2", report(1), 103).value() == true);            // other VM
    CHECK(s->reportCount("vm1").value() == 2);
    CHECK(s->reportCount("vm2").value() == 1);
}

TEST_CASE("latest VMs come one at a time, nothing carried from the VM before", "[collector][store]")
{
    TempDir dir;
    auto s = Store::open(dir.path() + "/c.db");
    REQUIRE(s);
    REQUIRE(s->noteVm("a", "/run/a.sock", {"mid-a", "host-a", "aa", "0.1"}, 50));
    REQUIRE(s->addReport("a", report(1, "no_nfit"), 100));
    REQUIRE(s->setHostFacts("a", {{"pid", 7}}));
    REQUIRE(s->addReport("b", report(1), 200)); // no identity, no host facts
    std::vector<VmState> seen;
    REQUIRE(s->eachLatest(false, [&](const VmState &v) { seen.push_back(v); }));
    REQUIRE(seen.size() == 2);
    CHECK(seen[0].vm == "a");
    CHECK(seen[0].hostFactsText == R"({"pid":7})");
    CHECK(seen[1].vm == "b");
    CHECK(seen[1].hostname.empty());
    CHECK(seen[1].hostFactsText.empty());
    CHECK(seen[1].hostFacts.is_null());
    CHECK(seen[1].verdict == "dax_verified");
}

TEST_CASE("a reader's open of a missing store says why", "[collector][store]")
{
    TempDir dir;
    auto s = Store::openReadOnly(dir.path() + "/none/collector.db");
    REQUIRE_FALSE(s);
    CHECK(s.error().code == ENOENT);
    CHECK_THAT(s.error().describe(),
               Catch::Contains("No such file or directory") && Catch::Contains("--state-dir"));
}

TEST_CASE("store keeps the latest state per VM and survives reopening", "[collector][store]")
{
    TempDir dir;
    {
        auto s = Store::open(dir.path() + "/c.db");
        REQUIRE(s);
        REQUIRE(s->noteVm("vm1", "/run/vm1.sock", {"mid", "host1", "aa", "0.1"}, 50));
        REQUIRE(s->addReport("vm1", report(1, "no_nfit"), 100));
        REQUIRE(s->addReport("vm1", report(2, "problems_found"), 200));
        REQUIRE(s->setHostFacts("vm1", {{"pid", 7}}));
    }
    auto s = Store::openReadOnly(dir.path() + "/c.db");
    REQUIRE(s);
    auto vms = s->latest();
    REQUIRE(vms);
    REQUIRE(vms->size() == 1);
    const auto &v = vms->front();
    CHECK(v.vm == "vm1");
    CHECK(v.hostname == "host1");
    CHECK(v.machineId == "mid");
    CHECK(v.socket == "/run/vm1.sock");
    CHECK(v.verdict == "problems_found");
    CHECK(v.seq == 2);
    CHECK(v.lastReportAt == 200);
    CHECK(v.reportCount == 2);
    CHECK(v.hostFacts["pid"] == 7);
    auto h = s->history("vm1", 10);
    REQUIRE(h);
    REQUIRE(h->size() == 2);
    CHECK(h->at(0).seq == 2); // newest first
    CHECK(h->at(1).report["verdict"]["code"] == "no_nfit");
    CHECK(h->at(1).metrics["x"] == 1);
}

TEST_CASE("store enforces the per-VM row limit, oldest first", "[collector][store]")
{
    TempDir dir;
    auto s = Store::open(dir.path() + "/c.db", StoreOptions{3});
    REQUIRE(s);
    for (std::uint64_t i = 1; i <= 10; ++i)
        REQUIRE(s->addReport("vm1", report(i), static_cast<std::int64_t>(i)));
    REQUIRE(s->addReport("vm2", report(1), 1));
    CHECK(s->reportCount("vm1").value() == 3);
    CHECK(s->reportCount("vm2").value() == 1);
    auto h = s->history("vm1", 10);
    REQUIRE(h);
    CHECK(h->back().seq == 8);
}

TEST_CASE("store enforces the per-VM byte limit, oldest first", "[collector][store]")
{
    TempDir dir;
    auto s = Store::open(dir.path() + "/c.db", StoreOptions{1000, 10000});
    REQUIRE(s);
    for (std::uint64_t i = 1; i <= 20; ++i) {
        auto r = report(i);
        r.report["pad"] = std::string(2000, 'x'); // ~2 KB each
        REQUIRE(s->addReport("vm1", r, static_cast<std::int64_t>(i)));
    }
    auto n = s->reportCount("vm1").value();
    CHECK(n >= 3);
    CHECK(n <= 5);
    auto h = s->history("vm1", 100);
    REQUIRE(h);
    CHECK(h->front().seq == 20); // the newest is always kept
}

TEST_CASE("the newest report of a VM is kept even when it alone exceeds the byte limit",
          "[collector][store]")
{
    TempDir dir;
    auto s = Store::open(dir.path() + "/c.db", StoreOptions{1000, 100});
    REQUIRE(s);
    for (std::uint64_t i = 1; i <= 3; ++i) {
        auto r = report(i);
        r.report["pad"] = std::string(2000, 'x'); // 20 times the limit
        REQUIRE(s->addReport("vm1", r, static_cast<std::int64_t>(i)));
        CHECK(s->reportCount("vm1").value() == 1);
        auto h = s->history("vm1", 10);
        REQUIRE(h);
        REQUIRE(h->size() == 1);
        CHECK(h->front().seq == i);
    }
    // Row limit 1: the same, by count.
    auto one = Store::open(dir.path() + "/d.db", StoreOptions{1});
    REQUIRE(one);
    REQUIRE(one->addReport("vm1", report(1), 1));
    REQUIRE(one->addReport("vm1", report(2), 2));
    CHECK(one->reportCount("vm1").value() == 1);
    CHECK(one->history("vm1", 10)->front().seq == 2);
}

TEST_CASE("a locked database fails the write at once; the next one goes through",
          "[collector][store]")
{
    TempDir dir;
    auto s = Store::open(dir.path() + "/c.db", StoreOptions{1000, 1 << 20, 0});
    REQUIRE(s);
    REQUIRE(s->addReport("vm1", report(1), 1));
    // Another connection holds the write lock: this write fails at once.
    auto other = SqliteDb::open(dir.path() + "/c.db", false);
    REQUIRE(other);
    REQUIRE(other->exec("BEGIN IMMEDIATE"));
    CHECK_FALSE(s->addReport("vm1", report(2), 2));
    REQUIRE(other->exec("ROLLBACK"));
    auto again = s->addReport("vm1", report(2), 2);
    REQUIRE(again);
    CHECK(*again);
    CHECK(s->reportCount("vm1").value() == 2);
}

namespace
{

// The counters must equal what the table holds.
void requireCountersTrue(Store &s, const std::string &vm)
{
    auto c = s.counters(vm);
    REQUIRE(c);
    CHECK(c->rows == s.reportCount(vm).value());
    auto h = s.history(vm, 1000000);
    REQUIRE(h);
    std::uint64_t bytes = 0;
    for (const auto &r : *h)
        bytes += r.reportText.size() + r.metricsText.size();
    CHECK(c->bytes == bytes);
}

} // namespace

TEST_CASE("per-VM counters follow inserts, resends and trims; the newest row always stays",
          "[collector][store][trim]")
{
    TempDir dir;
    auto s = Store::open(dir.path() + "/c.db", StoreOptions{5, 6000});
    REQUIRE(s);
    std::uint64_t seq = 0;
    for (int i = 0; i < 40; ++i) {
        auto r = report(++seq);
        r.report["pad"] = std::string(static_cast<std::size_t>((i * 397) % 2500), 'p');
        REQUIRE(s->addReport("vm1", r, i));
        if (i % 7 == 3) // a resend changes nothing
            CHECK_FALSE(s->addReport("vm1", r, i).value());
        requireCountersTrue(*s, "vm1");
        auto h = s->history("vm1", 1);
        REQUIRE(h);
        REQUIRE(h->size() == 1);
        CHECK(h->front().seq == seq); // the newest is never trimmed
        auto c = s->counters("vm1").value();
        CHECK(c.rows <= 5);
        CHECK((c.bytes <= 6000 || c.rows == 1));
    }
    REQUIRE(s->addReport("vm2", report(1), 1));
    requireCountersTrue(*s, "vm2");
    CHECK(s->counters("vm2")->rows == 1);
    CHECK(s->counters("nobody")->rows == 0);
}

TEST_CASE("counters recover when rows were deleted behind the collector's back",
          "[collector][store][trim]")
{
    TempDir dir;
    auto s = Store::open(dir.path() + "/c.db", StoreOptions{3});
    REQUIRE(s);
    for (std::uint64_t i = 1; i <= 3; ++i)
        REQUIRE(s->addReport("vm1", report(i), 1));
    auto other = SqliteDb::open(dir.path() + "/c.db", false);
    REQUIRE(other);
    REQUIRE(other->exec("DELETE FROM reports")); // an operator, by hand
    REQUIRE(s->addReport("vm1", report(4), 1));  // counters say 4 > 3: trim
    CHECK(s->reportCount("vm1").value() == 1);
    CHECK(s->history("vm1", 10)->front().seq == 4);
    requireCountersTrue(*s, "vm1");
}

TEST_CASE("a batch is one transaction: all stored, resends within it counted once",
          "[collector][store][batch]")
{
    TempDir dir;
    auto s = Store::open(dir.path() + "/c.db");
    REQUIRE(s);
    std::string vm1 = "vm1", vm2 = "vm2";
    auto a = protocol::recordOf(report(1)), b = protocol::recordOf(report(2)),
         c = protocol::recordOf(report(1, "no_nfit", "bb"));
    std::vector<BatchEntry> first = {{a}, {b}}, second = {{c}}, third = {{a}};
    std::vector<ChannelReports> batch = {{&vm1, first}, {&vm2, second}, {&vm1, third}};
    REQUIRE(s->addReports(batch, 10));
    CHECK(first[0].receipt == Receipt::Stored);
    CHECK(first[1].receipt == Receipt::Stored);
    CHECK(second[0].receipt == Receipt::Stored);
    CHECK(third[0].receipt == Receipt::Duplicate); // a resend within the batch
    CHECK(s->commits() == 1);
    CHECK(s->reportCount("vm1").value() == 2);
    requireCountersTrue(*s, "vm1");
    auto latest = s->latest().value();
    REQUIRE(latest.size() == 2);
    CHECK(latest[0].seq == 2);
    CHECK(latest[0].reportCount == 2);
    CHECK(latest[1].verdict == "no_nfit");
}

TEST_CASE("batches keep what the same reports one at a time keep", "[collector][store][batch]")
{
    // Each VM's state and counters are written once per batch, and its trim
    // runs once per batch: the rows kept must be those of a store that takes
    // the same reports one by one (limits on both rows and bytes).
    TempDir dir;
    StoreOptions limits{6, 9000};
    auto one = Store::open(dir.path() + "/one.db", limits);
    auto batched = Store::open(dir.path() + "/batched.db", limits);
    REQUIRE(one);
    REQUIRE(batched);
    std::vector<std::string> vms = {"vm1", "vm2", "vm3"};
    std::vector<std::string> names;
    std::vector<BatchEntry> records;
    std::uint64_t seq[3] = {0, 0, 0};
    for (int i = 0; i < 120; ++i) {
        int v = (i * 7 + i / 5) % 3;
        auto r = report(++seq[v], i % 4 ? "dax_verified" : "problems_found");
        r.report["pad"] = std::string(static_cast<std::size_t>((i * 613) % 3000), 'p');
        r.droppedReports = static_cast<std::uint64_t>(i);
        names.push_back(vms[static_cast<std::size_t>(v)]);
        records.push_back({protocol::recordOf(r)});
        if (i % 9 == 4) { // a resend within the batch
            names.push_back(names.back());
            records.push_back(records.back());
        }
    }
    for (std::size_t i = 0; i < records.size(); ++i) {
        ChannelReports part{&names[i], std::span(&records[i], 1)};
        REQUIRE(one->addReports(std::span(&part, 1), 5));
    }
    // Batches of 1-15 reports, one part per run of a VM's reports (a VM may
    // have several parts in one batch).
    for (std::size_t at = 0, n = 1; at < records.size(); at += n, n = n % 13 + 3) {
        std::size_t end = std::min(at + n, records.size()), j = at;
        std::vector<ChannelReports> batch;
        for (std::size_t i = at; i < end; i = j) {
            for (j = i + 1; j < end && names[j] == names[i]; ++j) {
            }
            batch.push_back({&names[i], std::span(&records[i], j - i)});
        }
        REQUIRE(batched->addReports(batch, 5));
    }
    for (const auto &vm : vms) {
        requireCountersTrue(*batched, vm);
        auto a = one->history(vm, 1000).value(), b = batched->history(vm, 1000).value();
        REQUIRE(a.size() == b.size());
        for (std::size_t i = 0; i < a.size(); ++i)
            CHECK(a[i].seq == b[i].seq);
        CHECK(one->counters(vm)->bytes == batched->counters(vm)->bytes);
    }
    auto la = one->latest().value(), lb = batched->latest().value();
    REQUIRE(la.size() == lb.size());
    for (std::size_t i = 0; i < la.size(); ++i) {
        CHECK(la[i].seq == lb[i].seq);
        CHECK(la[i].verdict == lb[i].verdict);
        CHECK(la[i].droppedReports == lb[i].droppedReports);
        CHECK(la[i].reportCount == lb[i].reportCount);
    }
}

TEST_CASE("a batch that cannot commit stores nothing", "[collector][store][batch]")
{
    TempDir dir;
    auto s = Store::open(dir.path() + "/c.db", StoreOptions{1000, 1 << 20, 0});
    REQUIRE(s);
    std::string vm = "vm1";
    auto a = protocol::recordOf(report(1)), b = protocol::recordOf(report(2));
    std::vector<BatchEntry> reports = {{a}, {b}};
    ChannelReports part{&vm, reports};
    auto other = SqliteDb::open(dir.path() + "/c.db", false);
    REQUIRE(other);
    REQUIRE(other->exec("BEGIN IMMEDIATE"));
    CHECK_FALSE(s->addReports(std::span(&part, 1), 1));
    REQUIRE(other->exec("ROLLBACK"));
    CHECK(s->reportCount("vm1").value() == 0);
    CHECK(s->counters("vm1")->rows == 0);
    CHECK(reports[0].receipt == Receipt::NotStored);
    REQUIRE(s->addReports(std::span(&part, 1), 1));
    CHECK(reports[1].receipt == Receipt::Stored);
    requireCountersTrue(*s, "vm1");
}

TEST_CASE("a commit into a deleted store leaves every receipt NotStored",
          "[collector][store][batch]")
{
    TempDir dir;
    auto s = Store::open(dir.path() + "/c.db");
    REQUIRE(s);
    std::string vm = "vm1";
    std::vector<BatchEntry> reports = {{protocol::recordOf(report(1))},
                                       {protocol::recordOf(report(2))}};
    ChannelReports part{&vm, reports};
    // The commit goes through, into a file no one can read: no receipt may say stored.
    for (const char *suffix : {"", "-wal", "-shm"})
        ::unlink((dir.path() + "/c.db" + suffix).c_str());
    CHECK_FALSE(s->addReports(std::span(&part, 1), 1));
    CHECK(s->filesLost() == 1);
    CHECK(reports[0].receipt == Receipt::NotStored);
    CHECK(reports[1].receipt == Receipt::NotStored);
}

TEST_CASE("a store from before the counters gets them, counted once", "[collector][store]")
{
    TempDir dir;
    {
        auto db = SqliteDb::open(dir.path() + "/c.db", false);
        REQUIRE(db);
        REQUIRE(db->exec(
            "CREATE TABLE vms (vm TEXT PRIMARY KEY, socket TEXT NOT NULL DEFAULT '', "
            "machine_id TEXT NOT NULL DEFAULT '', hostname TEXT NOT NULL DEFAULT '', "
            "agent_version TEXT NOT NULL DEFAULT '', stream TEXT NOT NULL DEFAULT '', "
            "seq INTEGER NOT NULL DEFAULT 0, verdict TEXT NOT NULL DEFAULT '', "
            "dropped_reports INTEGER NOT NULL DEFAULT 0, last_report_at INTEGER NOT NULL DEFAULT "
            "0, "
            "last_seen_at INTEGER NOT NULL DEFAULT 0, host_facts TEXT);"
            "CREATE TABLE reports (id INTEGER PRIMARY KEY AUTOINCREMENT, vm TEXT NOT NULL, "
            "stream TEXT NOT NULL, seq INTEGER NOT NULL, received_at INTEGER NOT NULL, "
            "reason TEXT NOT NULL, verdict TEXT NOT NULL, report TEXT NOT NULL, metrics TEXT, "
            "bytes INTEGER NOT NULL DEFAULT 0, UNIQUE (vm, stream, seq));"
            "INSERT INTO vms (vm, seq) VALUES ('old', 2);"
            "INSERT INTO reports (vm, stream, seq, received_at, reason, verdict, report, bytes) "
            "VALUES ('old', 'aa', 1, 1, 'start', 'x', '{}', 2), "
            "('old', 'aa', 2, 2, 'interval', 'x', '{}', 2);"));
    }
    auto ro = Store::openReadOnly(dir.path() + "/c.db"); // query before any new collector
    REQUIRE(ro);
    CHECK(ro->latest().value().front().reportCount == 2);
    auto s = Store::open(dir.path() + "/c.db");
    REQUIRE(s);
    CHECK(s->counters("old")->rows == 2);
    CHECK(s->counters("old")->bytes == 4);
    REQUIRE(s->addReport("old", report(3), 3));
    CHECK(s->counters("old")->rows == 3);
    CHECK(s->latest().value().front().reportCount == 3);
}

TEST_CASE("the trim deletes no more than it must", "[collector][store][trim]")
{
    TempDir dir;
    // Equal rows (the seq has the same number of digits): 3 fit in 3.5 rows' bytes.
    auto row = [](std::uint64_t seq) {
        auto r = report(seq);
        r.report["pad"] = std::string(1000, 'p');
        return r;
    };
    std::string probe = row(10).report.dump() + row(10).metrics.dump();
    auto s = Store::open(dir.path() + "/c.db", StoreOptions{100, probe.size() * 7 / 2});
    REQUIRE(s);
    for (std::uint64_t seq = 10; seq < 20; ++seq) {
        REQUIRE(s->addReport("vm1", row(seq), 1));
        CHECK(s->reportCount("vm1").value() == std::min<std::uint64_t>(seq - 9, 3));
        requireCountersTrue(*s, "vm1");
    }
}
