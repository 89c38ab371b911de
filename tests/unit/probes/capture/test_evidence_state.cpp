// Each evidence state to the capture's fields and back (probes/capture/live_facts.cpp),
// and captures from real guests read into the same states (issue 20).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "probes/capture/live_facts.h"
#include "probes/readers/dax_evidence.h"
#include "probes/readers/facts.h"

using namespace daxprobe;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace
{

json captured(const Facts &facts, const char *what)
{
    return liveFactsToJson(facts)["mounts"]["/mnt/pmem"][what];
}

MountLiveFacts replayed(const json &mount)
{
    Facts facts;
    liveFactsFromJson({{"mounts", {{"/mnt/pmem", mount}}}}, facts);
    return facts.mountLive.at("/mnt/pmem");
}

} // namespace

TEST_CASE("statx: each state to the capture's ran/error and back", "[evidence]")
{
    struct Case {
        const char *name;
        void (*set)(StatxEvidence &);
        bool ran;
        const char *error;
    };
    const Case cases[] = {
        {"not run", [](StatxEvidence &) {}, false, ""},
        {"skipped", [](StatxEvidence &s) { s.skip("no regular file found to examine"); }, false,
         "no regular file found to examine"},
        {"failed", [](StatxEvidence &s) { s.fail("statx /mnt/pmem/f: Permission denied"); }, true,
         "statx /mnt/pmem/f: Permission denied"},
        {"observed", [](StatxEvidence &s) { s.observe(); }, true, ""},
    };
    for (const auto &c : cases) {
        SECTION(c.name)
        {
            Facts facts;
            StatxEvidence &s = facts.mountLive["/mnt/pmem"].statx;
            c.set(s);
            s.dax = s.observed();
            json j = captured(facts, "statx");
            CHECK(j["ran"] == c.ran);
            CHECK(j["error"] == c.error);
            StatxEvidence back = replayed({{"statx", j}}).statx;
            CHECK(back.state == s.state);
            CHECK(back.text == s.text);
            CHECK(back.dax == s.dax);
        }
    }
}

TEST_CASE("MAP_SYNC: each state to the capture's ran/skipped/ok/error and back", "[evidence]")
{
    struct Case {
        const char *name;
        void (*set)(MapSyncEvidence &);
        bool ran;
        const char *skipped;
        bool ok;
        const char *error;
    };
    const Case cases[] = {
        {"not run", [](MapSyncEvidence &) {}, false, "", false, ""},
        {"skipped", [](MapSyncEvidence &m) { m.skip("read-only mount"); }, false, "read-only mount",
         false, ""},
        {"observed, mapped",
         [](MapSyncEvidence &m) {
             m.observe();
             m.mapped = true;
         },
         true, "", true, ""},
        {"observed, refused",
         [](MapSyncEvidence &m) { m.observe("mmap MAP_SYNC: Operation not supported"); }, true, "",
         false, "mmap MAP_SYNC: Operation not supported"},
    };
    for (const auto &c : cases) {
        SECTION(c.name)
        {
            Facts facts;
            MapSyncEvidence &m = facts.mountLive["/mnt/pmem"].mapSync;
            c.set(m);
            json j = captured(facts, "map_sync");
            CHECK(j["ran"] == c.ran);
            CHECK(j["skipped"] == c.skipped);
            CHECK(j["ok"] == c.ok);
            CHECK(j["error"] == c.error);
            MapSyncEvidence back = replayed({{"map_sync", j}}).mapSync;
            CHECK(back.state == m.state);
            CHECK(back.text == m.text);
            CHECK(back.mapped == m.mapped);
        }
    }
}

TEST_CASE("residency: each state to the capture's ok/reason and back", "[evidence]")
{
    struct Case {
        const char *name;
        void (*set)(Residency &);
        bool ok;
        const char *reason;
    };
    const Case cases[] = {
        {"not run", [](Residency &) {}, false, ""},
        {"failed", [](Residency &r) { r.fail("mincore: Cannot allocate memory"); }, false,
         "mincore: Cannot allocate memory"},
        {"observed", [](Residency &r) { r.observe(); }, true, ""},
        {"observed, not applicable",
         [](Residency &r) { r.observe("DAX file: reads and mappings bypass the page cache"); },
         true, "DAX file: reads and mappings bypass the page cache"},
    };
    for (const auto &c : cases) {
        SECTION(c.name)
        {
            Facts facts;
            facts.files.push_back({"/mnt/pmem/f", {}, {}});
            c.set(facts.files[0].residency);
            json j = liveFactsToJson(facts)["files"][0]["residency"];
            CHECK(j["ok"] == c.ok);
            CHECK(j["reason"] == c.reason);
            Facts back;
            liveFactsFromJson({{"files", {{{"path", "/mnt/pmem/f"}, {"residency", j}}}}}, back);
            CHECK(back.files.at(0).residency.state == facts.files[0].residency.state);
            CHECK(back.files.at(0).residency.text == facts.files[0].residency.text);
        }
    }
}

TEST_CASE("perf: each state to the capture's usable/reason and back", "[evidence]")
{
    struct Case {
        const char *name;
        void (*set)(PerfAvailability &);
        bool usable;
        const char *reason;
    };
    const Case cases[] = {
        {"not run", [](PerfAvailability &) {}, false, ""},
        {"failed", [](PerfAvailability &p) { p.fail("no permission (perf_event_paranoid=3)"); },
         false, "no permission (perf_event_paranoid=3)"},
        {"observed", [](PerfAvailability &p) { p.observe(); }, true, ""},
    };
    for (const auto &c : cases) {
        SECTION(c.name)
        {
            Facts facts;
            c.set(facts.faults.perf);
            json j = liveFactsToJson(facts)["perf"];
            CHECK(j == json({{"usable", c.usable}, {"reason", c.reason}}));
            Facts back;
            liveFactsFromJson({{"perf", j}}, back);
            CHECK(back.faults.perf.state == facts.faults.perf.state);
            CHECK(back.faults.perf.text == facts.faults.perf.text);
        }
    }
}

TEST_CASE("captures from real guests read into states and write back the same fields", "[evidence]")
{
    int seen = 0;
    for (const auto &e : fs::directory_iterator(FIXTURES_DIR)) {
        fs::path file = e.path() / "live.json";
        if (!fs::exists(file))
            continue;
        json j = json::parse(std::ifstream(file));
        Facts facts;
        liveFactsFromJson(j, facts);
        json again = liveFactsToJson(facts);
        INFO(file.string());
        CHECK(again["mounts"] == j.value("mounts", json::object()));
        CHECK(again["files"] == j.value("files", json::array()));
        CHECK(again["perf"] == j.value("perf", json::object()));
        ++seen;
    }
    CHECK(seen > 10);
}

TEST_CASE("old captures: the states the guests wrote", "[evidence]")
{
    // tests/fixtures/virtio-pmem: the O_TMPFILE statx answered.
    auto live = replayed(json::parse(R"j({"statx": {"ran": true, "error": "", "dax": true,
        "dax_known": true, "file": "/mnt/pmem/(O_TMPFILE)"}})j"));
    CHECK(live.statx.state == EvidenceState::Observed);
    CHECK(live.statx.dax);
    // An object without the fields (a capture older than statx): not run.
    CHECK(replayed({{"statx", json::object()}}).statx.state == EvidenceState::NotRun);
    // MAP_SYNC refused on virtio-pmem (tests/fixtures/virtio-pmem): an answer, not a failure.
    auto refused =
        replayed(json::parse(R"({"map_sync": {"error": "mmap MAP_SYNC: Operation not supported",
        "is_pmem": false, "ok": false, "ran": true, "skipped": ""}})"));
    CHECK(refused.mapSync.state == EvidenceState::Observed);
    CHECK_FALSE(refused.mapSync.mapped);
}

TEST_CASE("DIMM health and remembered counts: each state to the capture and back",
          "[evidence][dimm]")
{
    Facts facts;
    NdDimm observed, skipped, failed;
    observed.dev = "nmem0";
    observed.health.observe();
    observed.health.healthState = "fatal";
    observed.health.lifeUsedPercent = 5;
    observed.health.mediaTemperature = 23.0;
    observed.health.controllerTemperature = -1.5;
    observed.health.shutdownDirty = true;
    observed.health.shutdownCount = 43;
    skipped.dev = "nmem1";
    skipped.health.skip("not available: the DIMM has no SMART command");
    failed.dev = "nmem2";
    failed.health.fail("SMART command failed: -5");
    facts.topology.dimms = {observed, skipped, failed};
    facts.shutdownsSeen = {{"cdab-0a-07e0-ffffffff", 42}};

    Facts back;
    liveFactsFromJson(liveFactsToJson(facts), back);
    REQUIRE(back.topology.dimms.size() == 3);
    const DimmHealth &h = back.topology.dimms[0].health;
    CHECK(h.observed());
    CHECK(h.healthState == "fatal");
    CHECK(h.lifeUsedPercent == 5u);
    CHECK(h.mediaTemperature == 23.0);
    CHECK(h.controllerTemperature == -1.5);
    CHECK(h.shutdownDirty == true);
    CHECK(h.shutdownCount == 43u);
    CHECK(back.topology.dimms[1].health.state == EvidenceState::Skipped);
    CHECK(back.topology.dimms[1].health.text == "not available: the DIMM has no SMART command");
    CHECK(back.topology.dimms[2].health.failed());
    CHECK(!back.topology.dimms[2].health.shutdownCount);
    CHECK(back.shutdownsSeen == facts.shutdownsSeen);
}
