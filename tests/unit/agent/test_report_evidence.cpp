// Each evidence state as the report shows it: the daxprobe.check/1 fields
// (agent/REPORT.md), which stay those older agents wrote, and the verdict's
// evidence line (issue 20).
#include <catch2/catch.hpp>

#include "agent/check/report_json.h"
#include "agent/check/report_text.h"
#include "probes/judges/verdict.h"

using namespace daxprobe;
using json = nlohmann::json;

namespace
{

// An ext4 dax=always mount on an fsdax namespace, with `live` as its live facts.
Facts daxMount(const MountLiveFacts &live)
{
    Facts f;
    f.topology.observe();
    NdNamespace ns;
    ns.dev = "namespace0.0";
    ns.mode = "fsdax";
    ns.align = 2 << 20;
    ns.blockdev = "pmem0";
    f.topology.namespaces.push_back(ns);
    f.blockdevs.push_back({"pmem0", 259, 0, true});
    MountEntry m;
    m.major = 259;
    m.mountPoint = "/mnt/pmem";
    m.source = "/dev/pmem0";
    m.fstype = "ext4";
    m.mountOptions = "rw";
    m.superOptions = "rw,dax=always";
    f.mounts.push_back(m);
    f.mountLive["/mnt/pmem"] = live;
    return f;
}

struct Shown {
    json mount;        // the report's mounts[0]
    std::string lines; // the verdict's evidence, "check: result" per line
};

Shown show(const MountLiveFacts &live)
{
    Facts f = daxMount(live);
    json j = reportToJson(evaluate(f));
    Shown s{j["mounts"].at(0), ""};
    for (const auto &e : s.mount["verdict"]["evidence"])
        s.lines += e["check"].get<std::string>() + ": " + e["result"].get<std::string>() + "\n";
    return s;
}

} // namespace

TEST_CASE("statx: each state in the report and the verdict", "[evidence][report]")
{
    MountLiveFacts live;
    live.mapSync.skip("disabled (--no-active)");

    Shown notRun = show(live);
    CHECK(notRun.mount["statx_dax"].is_null());
    CHECK_THAT(notRun.lines, !Catch::Contains("statx"));

    live.statx.skip("no regular file found to examine");
    Shown skipped = show(live);
    CHECK(
        skipped.mount["statx_dax"] ==
        json({{"file", nullptr}, {"dax", nullptr}, {"error", "no regular file found to examine"}}));
    CHECK_THAT(skipped.lines, Catch::Contains("statx: not checked: no regular file found"));

    live.statx = {};
    live.statx.file = "/mnt/pmem/f";
    live.statx.fail("statx /mnt/pmem/f: Permission denied");
    Shown failed = show(live);
    CHECK(failed.mount["statx_dax"] == json({{"file", "/mnt/pmem/f"},
                                             {"dax", nullptr},
                                             {"error", "statx /mnt/pmem/f: Permission denied"}}));
    CHECK_THAT(failed.lines, Catch::Contains("statx: not checked: statx /mnt/pmem/f: Permission"));

    live.statx.observe();
    live.statx.dax = true;
    Shown observed = show(live);
    CHECK(observed.mount["statx_dax"] ==
          json({{"file", "/mnt/pmem/f"}, {"dax", true}, {"error", nullptr}}));
    CHECK_THAT(observed.lines, Catch::Contains("statx: STATX_ATTR_DAX set on /mnt/pmem/f"));
    CHECK(observed.mount["verdict"]["code"] == code::DaxActive);
}

TEST_CASE("MAP_SYNC: each state in the report and the verdict", "[evidence][report]")
{
    MountLiveFacts live;
    live.statx.observe();
    live.statx.dax = true;
    live.statx.file = "/mnt/pmem/(O_TMPFILE)";

    Shown notRun = show(live);
    CHECK(notRun.mount["map_sync"] == json({{"ran", false},
                                            {"ok", nullptr},
                                            {"is_pmem", nullptr},
                                            {"error", nullptr},
                                            {"skipped", nullptr}}));
    CHECK_THAT(notRun.lines, !Catch::Contains("map_sync"));

    live.mapSync.skip("read-only mount");
    Shown skipped = show(live);
    CHECK(skipped.mount["map_sync"] == json({{"ran", false},
                                             {"ok", nullptr},
                                             {"is_pmem", nullptr},
                                             {"error", nullptr},
                                             {"skipped", "read-only mount"}}));
    CHECK_THAT(skipped.lines, Catch::Contains("map_sync: skipped: read-only mount"));

    live.mapSync = {};
    live.mapSync.observe("mmap MAP_SYNC: Operation not supported");
    Shown refused = show(live);
    // libpmem did not answer (not installed): unknown, never false.
    CHECK(refused.mount["map_sync"] == json({{"ran", true},
                                             {"ok", false},
                                             {"is_pmem", nullptr},
                                             {"error", "mmap MAP_SYNC: Operation not supported"},
                                             {"skipped", nullptr}}));
    CHECK_THAT(refused.lines, Catch::Contains("map_sync: MAP_SYNC refused: mmap MAP_SYNC"));
    CHECK(refused.mount["verdict"]["severity"] == "warning");
    live.mapSync.isPmem = false; // libpmem answered: not pmem
    CHECK(show(live).mount["map_sync"]["is_pmem"] == false);

    live.mapSync = {};
    live.mapSync.observe();
    live.mapSync.mapped = true;
    live.mapSync.isPmem = true;
    Shown mapped = show(live);
    CHECK(mapped.mount["map_sync"] == json({{"ran", true},
                                            {"ok", true},
                                            {"is_pmem", true},
                                            {"error", nullptr},
                                            {"skipped", nullptr}}));
    CHECK_THAT(mapped.lines, Catch::Contains("map_sync: MAP_SYNC mapping succeeded"));
    CHECK(mapped.mount["verdict"]["severity"] == "ok");
}

TEST_CASE("perf and tracepoints: each state in the report and its text", "[evidence][report]")
{
    auto shown = [](const FaultFacts &faults) {
        Facts f = daxMount({});
        f.faults = faults;
        Report r = evaluate(f);
        return std::make_pair(reportToJson(r)["faults"], reportToText(r, TextStyle::Plain));
    };
    FaultFacts faults;
    auto [notRun, notRunText] = shown(faults);
    CHECK(notRun["perf"] == json({{"usable", false}, {"reason", nullptr}}));
    CHECK_THAT(notRunText, Catch::Contains("perf counters: not probed\n"));
    CHECK_THAT(notRunText, Catch::Contains("fs_dax tracepoints: not probed\n"));

    faults.perf.fail("no permission (perf_event_paranoid=3)");
    faults.tracepoints.fail("tracefs not readable: run as root");
    auto [failed, failedText] = shown(faults);
    CHECK(failed["perf"] ==
          json({{"usable", false}, {"reason", "no permission (perf_event_paranoid=3)"}}));
    CHECK(failed["tracepoints"]["reason"] == "tracefs not readable: run as root");
    CHECK_THAT(failedText,
               Catch::Contains("perf counters: unusable: no permission (perf_event_paranoid=3)"));

    faults.perf.observe();
    faults.tracepoints.observe();
    faults.tracepoints.tracefs = "/sys/kernel/tracing";
    faults.tracepoints.events = {"dax_pmd_fault"};
    auto [observed, observedText] = shown(faults);
    CHECK(observed["perf"] == json({{"usable", true}, {"reason", nullptr}}));
    CHECK(observed["tracepoints"]["usable"] == true);
    CHECK_THAT(observedText, Catch::Contains("perf counters: usable\n"));
    CHECK_THAT(observedText,
               Catch::Contains("fs_dax tracepoints: 1 events in /sys/kernel/tracing"));
}

TEST_CASE("kernel log and nd topology: each state in the report and its text", "[evidence][report]")
{
    auto shown = [](const Facts &f) {
        Report r = evaluate(f);
        return std::make_pair(reportToJson(r), reportToText(r, TextStyle::Plain));
    };
    Facts f = daxMount({});
    f.kmsg.fail("open dev/kmsg: EPERM");
    auto [failed, failedText] = shown(f);
    CHECK(failed["kmsg"] == json({{"readable", false}, {"error", "open dev/kmsg: EPERM"}}));
    CHECK_THAT(failedText, Catch::Contains("kernel log unreadable: open dev/kmsg: EPERM"));

    f.kmsg.observe();
    auto [observed, observedText] = shown(f);
    CHECK(observed["kmsg"] == json({{"readable", true}, {"error", nullptr}}));
    CHECK(observed["ndctl"] == json({{"available", true}, {"error", nullptr}}));
    CHECK_THAT(observedText, !Catch::Contains("kernel log unreadable"));

    Facts unreadable;
    unreadable.topology.fail("list sys/bus/nd/devices: EACCES");
    auto [noTopology, noTopologyText] = shown(unreadable);
    CHECK(noTopology["ndctl"] ==
          json({{"available", false}, {"error", "list sys/bus/nd/devices: EACCES"}}));
    CHECK_THAT(noTopologyText, Catch::Contains("ndctl      list sys/bus/nd/devices: EACCES"));
    CHECK(noTopology["verdict"]["evidence"].dump().find("EACCES") != std::string::npos);
}

TEST_CASE("a missing library is said once, and what it leaves unknown is null",
          "[evidence][report][libraries]")
{
    MountLiveFacts live;
    live.statx.observe();
    live.statx.dax = true;
    live.mapSync.observe();
    live.mapSync.mapped = true; // the kernel answered; libpmem did not
    Facts f = daxMount(live);
    NdDimm a, b; // two DIMMs, as the appliance's QEMU gave one each boot
    a.dev = "nmem0";
    b.dev = "nmem1";
    auto missing = missingLibndctl("libndctl.so.6", "dlopen libndctl.so.6: libndctl.so.6: cannot "
                                                    "open shared object file");
    a.health.fail("not read: libndctl.so.6 could not be loaded");
    b.health = a.health;
    f.topology.dimms = {a, b};
    f.missingLibraries = {missing, missingLibpmem("libpmem.so.1", "dlopen libpmem.so.1: gone")};
    Report r = evaluate(f);
    json j = reportToJson(r);
    REQUIRE(j["missing_libraries"].size() == 2);
    CHECK(j["missing_libraries"][0]["soname"] == "libndctl.so.6");
    CHECK(j["missing_libraries"][1]["soname"] == "libpmem.so.1");
    CHECK_THAT(j["missing_libraries"][1]["leaves_unknown"].get<std::string>(),
               Catch::Contains("map_sync.is_pmem is null"));
    CHECK(j["mounts"][0]["map_sync"]["is_pmem"].is_null());
    CHECK(j["mounts"][0]["map_sync"]["ok"] == true);

    std::string text = reportToText(r, TextStyle::Plain);
    // The loader's words once in all, not once (or twice) per DIMM.
    auto count = [&text](const std::string &s) {
        std::size_t n = 0;
        for (auto p = text.find(s); p != std::string::npos; p = text.find(s, p + 1))
            ++n;
        return n;
    };
    CHECK(count("cannot open shared object file") == 1);
    CHECK(count("libpmem.so.1 is not installed") == 1);
    CHECK(count("libndctl.so.6 is not installed") == 1);
}
