// sqlite_floor: the floor under the collector's ingest rate. Inserts the
// rows the collector would store for the same reports (the same report and
// metrics text, in the collector's own schema, created by Store::open) with
// one prepared statement, BATCH rows per transaction, and nothing else: no
// sockets, no parsing, no counters, no trim. Prints one JSON line.
// --synchronous is the collector's durability level (FULL: an ack survives
// a host crash) unless told otherwise, so the ratio compares like with like.
#include <chrono>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "collector/store.h"

using namespace daxprobe;
using namespace daxprobe::collector;

int main(int argc, char **argv)
{
    std::string db, reportFile, sync = "FULL";
    std::uint64_t rows = 50000, batch = 1000, vms = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string k = argv[i], v = argv[i + 1];
        if (k == "--db")
            db = v;
        else if (k == "--report")
            reportFile = v;
        else if (k == "--rows")
            rows = std::stoull(v);
        else if (k == "--batch")
            batch = std::stoull(v);
        else if (k == "--vms")
            vms = std::stoull(v);
        else if (k == "--synchronous")
            sync = v;
    }
    if (db.empty() || reportFile.empty() || batch == 0 || vms == 0 ||
        (sync != "FULL" && sync != "NORMAL" && sync != "OFF")) {
        fmt::print(stderr, "usage: sqlite_floor --db PATH --report CHECK.json [--rows N] "
                           "[--batch ROWS_PER_TRANSACTION] [--vms N] "
                           "[--synchronous FULL|NORMAL|OFF]\n");
        return 2;
    }
    std::ifstream in(reportFile);
    std::stringstream ss;
    ss << in.rdbuf();
    auto doc = nlohmann::json::parse(ss.str(), nullptr, false);
    if (doc.is_discarded())
        return 2;
    std::string report = doc.dump(), metrics = R"({"meminfo":{"Cached":1}})";
    {
        auto s = Store::open(db); // the collector's schema, from its one home
        if (!s) {
            fmt::print(stderr, "sqlite_floor: {}\n", s.error().describe());
            return 1;
        }
    }
    auto conn = SqliteDb::open(db, false);
    std::string pragmas = "PRAGMA journal_mode=WAL; PRAGMA synchronous=" + sync + ";";
    if (!conn || !conn->exec(pragmas.c_str()))
        return 1;
    auto ins = conn->prepare("INSERT INTO reports (vm, stream, seq, received_at, reason, verdict, "
                             "report, metrics, bytes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
    if (!ins)
        return 1;
    std::vector<std::string> names;
    for (std::uint64_t v = 0; v < vms; ++v)
        names.push_back(fmt::format("g{}", v));
    auto t0 = std::chrono::steady_clock::now();
    for (std::uint64_t done = 0; done < rows;) {
        if (!conn->exec("BEGIN"))
            return 1;
        for (std::uint64_t k = 0; k < batch && done < rows; ++k, ++done) {
            ins->reset();
            ins->bind(1, names[done % vms]).bind(2, "5eed").bind(3, std::int64_t(done + 1));
            ins->bind(4, std::int64_t(1)).bind(5, "interval").bind(6, "dax_verified");
            ins->bind(7, report).bind(8, metrics);
            ins->bind(9, std::int64_t(report.size() + metrics.size()));
            if (ins->step() != SQLITE_DONE)
                return 1;
        }
        if (!conn->exec("COMMIT"))
            return 1;
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    fmt::print("{{\"rows\": {}, \"batch\": {}, \"synchronous\": \"{}\", \"seconds\": {:.4f}, "
               "\"rows_per_s\": {:.1f}}}\n",
               rows, batch, sync, secs, double(rows) / secs);
    return 0;
}
