#include <catch2/catch.hpp>

#include "store.h"
#include "tmpdir.h"

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

TEST_CASE("verdictCode tolerates any shape", "[collector][store]")
{
    using nlohmann::json;
    CHECK(verdictCode(json::object()) == "unknown");
    CHECK(verdictCode(json::array()) == "unknown");
    CHECK(verdictCode({{"verdict", "x"}}) == "unknown");
    CHECK(verdictCode({{"verdict", {{"code", 5}}}}) == "unknown");
    CHECK(verdictCode({{"verdict", {{"code", "a b"}}}}) == "a_b");
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
