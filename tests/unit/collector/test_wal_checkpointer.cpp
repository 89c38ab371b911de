#include <catch2/catch.hpp>

#include <filesystem>

#include "collector/store.h"
#include "tests/unit/collector/tmpdir.h"

using namespace daxprobe;
using namespace daxprobe::collector;

namespace
{

// Rows SQLite finds in a copy of the database file alone, without its
// write-ahead log: only what a checkpoint copied there.
std::int64_t rowsInDatabaseFile(const std::string &db, const std::string &scratch)
{
    std::string alone = scratch + "/alone.db";
    std::filesystem::copy_file(db, alone);
    auto copy = SqliteDb::open(alone, false);
    REQUIRE(copy);
    auto count = copy->prepare("SELECT COUNT(*) FROM reports");
    INFO((count ? std::string() : count.error().describe()));
    REQUIRE(count);
    REQUIRE(count->step() == SQLITE_ROW);
    return count->columnInt(0);
}

// `count` reports of ~4 KB into vm1, one commit each (a log page or more
// per report).
void addPaddedReports(Store &s, std::uint64_t count)
{
    const std::string pad(4000, 'p');
    for (std::uint64_t seq = 1; seq <= count; ++seq) {
        protocol::ReportEnvelope r{
            "aa", seq, "interval", {{"verdict", {{"code", "dax_verified"}}}}, {{"pad", pad}}, 0};
        REQUIRE(s.addReport("vm1", r, static_cast<std::int64_t>(seq)));
    }
}

} // namespace

TEST_CASE("the write-ahead log reaches the database file through the checkpointer's thread",
          "[collector][store][checkpoint]")
{
    TempDir dir;
    const std::string db = dir.path() + "/c.db";
    auto s = Store::open(db, StoreOptions{1000000, std::size_t{1} << 30, 50});
    REQUIRE(s);
    REQUIRE(s->checkpointer() != nullptr);
    CHECK(s->checkpointer()->stats().done == 0);

    // 600 reports of ~4 KB, one commit each: several thousand log pages,
    // past the 1,000 that make a checkpoint due.
    addPaddedReports(*s, 600);
    // The committing thread only signals; the checkpoint is the thread's.
    REQUIRE(s->checkpointer()->waitForCheckpoints(1, 10000));
    auto stats = s->checkpointer()->stats();
    CHECK(stats.failed == 0);
    CHECK(stats.lastError == "");

    std::filesystem::create_directory(dir.path() + "/copy");
    std::int64_t inFile = rowsInDatabaseFile(db, dir.path() + "/copy");
    CHECK(inFile > 0);
    CHECK(inFile <= 600);
    CHECK(s->reportCount("vm1").value() == 600); // and the store sees all of them
}

TEST_CASE("a read-only store has no checkpointer", "[collector][store][checkpoint]")
{
    TempDir dir;
    const std::string db = dir.path() + "/c.db";
    {
        auto w = Store::open(db);
        REQUIRE(w);
    }
    auto r = Store::openReadOnly(db);
    REQUIRE(r);
    CHECK(r->checkpointer() == nullptr);
}

TEST_CASE("under writes that never pause, the log still starts over",
          "[collector][store][checkpoint]")
{
    TempDir dir;
    const std::string db = dir.path() + "/c.db";
    auto s = Store::open(db, StoreOptions{1000000, std::size_t{1} << 30, 50});
    REQUIRE(s);
    // 4,000 reports of ~4 KB back to back: ~20,000 log pages written. A
    // checkpointing thread alone never lets the log start over while commits
    // keep coming (it grew to 600 MB over 20,000 reports); with the writer
    // finishing the job at 4× the threshold, it stays near that.
    addPaddedReports(*s, 4000);
    auto pageSize = SqliteDb::open(db, false)->prepare("PRAGMA page_size");
    REQUIRE(pageSize);
    REQUIRE(pageSize->step() == SQLITE_ROW);
    // Twice the steady state: under load the writer's own checkpoint can
    // find the thread's copy still running and leave a few batches for the
    // next one (22.1 MB seen against 20.6 MB at load 17). Unbounded growth,
    // what this guards against, was 600 MB.
    const auto bound = 2 * static_cast<std::uintmax_t>(WalCheckpointer::kRestartFactor + 1) * 1000 *
                       static_cast<std::uintmax_t>(pageSize->columnInt(0) + 24);
    CHECK(std::filesystem::file_size(db + "-wal") <= bound);
    auto stats = s->checkpointer()->stats();
    CHECK(stats.byWriter >= 1);
    CHECK(stats.failed == 0);
}
