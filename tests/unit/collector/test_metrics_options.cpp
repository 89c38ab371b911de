#include <catch2/catch.hpp>

#include <fstream>

#include "collector/metrics.h"
#include "collector/options.h"
#include "tests/unit/collector/tmpdir.h"

using namespace daxprobe;
using namespace daxprobe::collector;

TEST_CASE("metrics render a gauge per verdict and _total counters", "[collector][metrics]")
{
    MetricsRegistry reg;
    reg.update("vm\"1", [](VmMetrics &m) {
        m.connected = true;
        m.stored = 3;
        m.disconnects["eof"] = 2;
        nlohmann::json report{{"verdict", {{"code", "problems_found"}}},
                              {"mounts",
                               {{{"verdict", {{"code", "dax_active"}}}},
                                {{"verdict", {{"code", "dax_silently_off"}}}},
                                {{"verdict", {{"code", "dax_per_file"}}}},
                                {{"verdict", {{"code", "made_up_by_guest"}}}}}}};
        MetricsRegistry::applyReport(m, protocol::summarizeReport(report.dump()), 1700000000);
    });
    std::string text = reg.render();
    CHECK_THAT(text, Catch::Contains("daxprobe_vm_connected{vm=\"vm\\\"1\"} 1"));
    CHECK_THAT(text,
               Catch::Contains("daxprobe_vm_verdict{vm=\"vm\\\"1\",verdict=\"problems_found\"} 1"));
    CHECK_THAT(text,
               Catch::Contains("daxprobe_vm_verdict{vm=\"vm\\\"1\",verdict=\"dax_verified\"} 0"));
    CHECK_THAT(
        text, Catch::Contains("daxprobe_vm_mounts{vm=\"vm\\\"1\",verdict=\"dax_silently_off\"} 1"));
    // Per-file DAX (issue 8) is a mount verdict of its own, counted too.
    CHECK_THAT(text,
               Catch::Contains("daxprobe_vm_mounts{vm=\"vm\\\"1\",verdict=\"dax_per_file\"} 1"));
    CHECK_THAT(text, Catch::Contains("daxprobe_collector_reports_stored_total{vm=\"vm\\\"1\"} 3"));
    CHECK_THAT(text, Catch::Contains(
                         "daxprobe_collector_disconnects_total{vm=\"vm\\\"1\",reason=\"eof\"} 2"));
    CHECK_THAT(text, Catch::Contains("# TYPE daxprobe_collector_reports_stored_total counter"));
    CHECK_THAT(text, !Catch::Contains("made_up_by_guest"));
}

TEST_CASE("metrics show each DIMM's verdict and unsafe shutdowns, bounded", "[collector][metrics]")
{
    MetricsRegistry reg;
    reg.update("vm1", [](VmMetrics &m) {
        nlohmann::json dimms = nlohmann::json::array();
        dimms.push_back({{"dev", "nmem4"},
                         {"dirty_shutdown", 43},
                         {"verdict", {{"code", "dimm_not_persistent"}}}});
        dimms.push_back({{"dev", "nmem\"x"}, {"verdict", {{"code", "dimm_ok"}}}});
        dimms.push_back({{"dev", "nmem9"}, {"verdict", {{"code", "made_up_by_guest"}}}});
        for (int i = 0; i < 100; ++i) // a guest that lists too many
            dimms.push_back({{"dev", "flood" + std::to_string(i)},
                             {"dirty_shutdown", 1},
                             {"verdict", {{"code", "dimm_ok"}}}});
        nlohmann::json report{{"verdict", {{"code", "problems_found"}}}, {"dimms", dimms}};
        MetricsRegistry::applyReport(m, protocol::summarizeReport(report.dump()), 1700000000);
        CHECK(m.dimms.size() == MetricsRegistry::kMaxDimms);
    });
    std::string text = reg.render();
    CHECK_THAT(text, Catch::Contains("daxprobe_vm_dimm_verdict{vm=\"vm1\",dimm=\"nmem4\","
                                     "verdict=\"dimm_not_persistent\"} 1"));
    CHECK_THAT(text,
               Catch::Contains(
                   "daxprobe_vm_dimm_verdict{vm=\"vm1\",dimm=\"nmem4\",verdict=\"dimm_ok\"} 0"));
    CHECK_THAT(text,
               Catch::Contains("daxprobe_vm_dimm_dirty_shutdowns{vm=\"vm1\",dimm=\"nmem4\"} 43"));
    CHECK_THAT(text, Catch::Contains("dimm=\"nmem\\\"x\",verdict=\"dimm_ok\"} 1"));
    // No count from the DIMM, no sample; an unknown code, no DIMM.
    CHECK_THAT(text,
               !Catch::Contains("daxprobe_vm_dimm_dirty_shutdowns{vm=\"vm1\",dimm=\"nmem\\\"x"));
    CHECK_THAT(text, !Catch::Contains("nmem9"));
}

TEST_CASE("metrics show each DIMM's SMART health and live shutdown count", "[collector][metrics]")
{
    MetricsRegistry reg;
    reg.update("vm1", [](VmMetrics &m) {
        nlohmann::json dimms = nlohmann::json::array();
        dimms.push_back({{"dev", "nmem1"},
                         {"health", {{"health_state", "fatal"}, {"shutdown_count", 43}}},
                         {"verdict", {{"code", "dimm_health_fatal"}}}});
        dimms.push_back({{"dev", "nmem2"},
                         {"health", {{"health_state", "made-up"}, {"shutdown_count", 7}}},
                         {"verdict", {{"code", "dimm_ok"}}}});
        dimms.push_back({{"dev", "nmem3"},
                         {"health", {{"available", false}}},
                         {"verdict", {{"code", "dimm_unsafe_shutdown"}}}});
        nlohmann::json report{{"verdict", {{"code", "problems_found"}}}, {"dimms", dimms}};
        MetricsRegistry::applyReport(m, protocol::summarizeReport(report.dump()), 1700000000);
    });
    std::string text = reg.render();
    CHECK_THAT(text, Catch::Contains("# TYPE daxprobe_vm_dimm_health gauge"));
    CHECK_THAT(text, Catch::Contains(
                         "daxprobe_vm_dimm_health{vm=\"vm1\",dimm=\"nmem1\",state=\"fatal\"} 1"));
    CHECK_THAT(
        text, Catch::Contains("daxprobe_vm_dimm_health{vm=\"vm1\",dimm=\"nmem1\",state=\"ok\"} 0"));
    CHECK_THAT(text,
               Catch::Contains("daxprobe_vm_dimm_shutdown_count{vm=\"vm1\",dimm=\"nmem1\"} 43"));
    CHECK_THAT(text, Catch::Contains("daxprobe_vm_dimm_verdict{vm=\"vm1\",dimm=\"nmem3\","
                                     "verdict=\"dimm_unsafe_shutdown\"} 1"));
    // An unknown state is no label value and no health sample; the count stays.
    CHECK_THAT(text, !Catch::Contains("made-up"));
    CHECK_THAT(text, !Catch::Contains("daxprobe_vm_dimm_health{vm=\"vm1\",dimm=\"nmem2\""));
    CHECK_THAT(text,
               Catch::Contains("daxprobe_vm_dimm_shutdown_count{vm=\"vm1\",dimm=\"nmem2\"} 7"));
    CHECK_THAT(text, !Catch::Contains("daxprobe_vm_dimm_health{vm=\"vm1\",dimm=\"nmem3\""));
}

TEST_CASE("socket arguments and config files", "[collector][options]")
{
    auto a = parseSocketArg("vm1=/run/a.sock");
    REQUIRE(a);
    CHECK(a->name == "vm1");
    CHECK(a->socketPath == "/run/a.sock");
    auto b = parseSocketArg("/run/x=y.sock");
    REQUIRE(b);
    CHECK(b->name == "/run/x=y.sock");
    auto c = parseSocketArg("vm2=/run/x=y.sock");
    REQUIRE(c);
    CHECK(c->name == "vm2");
    CHECK(c->socketPath == "/run/x=y.sock");
    // Ambiguous or empty: refused, never guessed.
    for (const char *bad : {"eq=ual=PATH", "=/run/a.sock", "vm1=", ""}) {
        INFO(bad);
        CHECK_FALSE(parseSocketArg(bad));
    }

    TempDir dir;
    std::string path = dir.path() + "/collector.conf";
    std::ofstream(path) << "# comment\nstate-dir /tmp/s\nsocket vm1 /run/vm1.sock\n"
                           "socket /run/vm2.sock\npidfile vm1 /run/vm1.pid\n"
                           "watch-dir /var/lib/libvirt/qemu/channel/target  # libvirt\n"
                           "metrics-listen 127.0.0.1:9999\nmax-rows 50\n";
    CollectorOptions o;
    REQUIRE(loadConfigFile(path, o));
    CHECK(o.stateDir == "/tmp/s");
    REQUIRE(o.sockets.size() == 2);
    CHECK(o.sockets[0].pidfile == "/run/vm1.pid");
    CHECK(o.sockets[1].name == "/run/vm2.sock");
    CHECK(o.watchDirs.size() == 1);
    CHECK(o.metricsListen == "127.0.0.1:9999");
    CHECK(o.maxRowsPerVm == 50);

    std::ofstream(path) << "bogus directive\n";
    CollectorOptions o2;
    CHECK_FALSE(loadConfigFile(path, o2));
    std::ofstream(path) << "pidfile nosuch /x\n";
    CHECK_FALSE(loadConfigFile(path, o2));
}

TEST_CASE("label values: the name as shown (invalid bytes as \\xNN), then \\ and \" escaped",
          "[collector][metrics]")
{
    CHECK(escapeLabel("a\nb") == "a\\\\x0ab");
    CHECK(escapeLabel("a\"b\\c") == "a\\\"b\\\\\\\\c");
    CHECK(escapeLabel("caf\xc3\xa9") == "caf\xc3\xa9"); // valid UTF-8 kept
    CHECK(escapeLabel("a\xff"
                      "b") == "a\\\\xffb");                        // invalid byte
    CHECK(escapeLabel("\xc3") == "\\\\xc3");                       // truncated sequence
    CHECK(escapeLabel("\xe0\x80\x80") == "\\\\xe0\\\\x80\\\\x80"); // overlong
    CHECK(escapeLabel("\xed\xa0\x80").find("\xed\xa0\x80") == std::string::npos); // surrogate
    CHECK(escapeLabel("a\xe2\x80\xae") == "a\\\\xe2\\\\x80\\\\xae");              // U+202E
    // Two names that differ only in an invalid byte stay two series, and
    // neither collides with one that spells the escape out.
    CHECK(escapeLabel("vm\xfe") != escapeLabel("vm\xff"));
    CHECK(escapeLabel("vm\xff") != escapeLabel("vm\\xff"));

    // A VM name from a directory entry can hold any byte but '/' and NUL:
    // the page must stay one sample per line and valid UTF-8.
    MetricsRegistry reg;
    reg.update("web\n1\xfe", [](VmMetrics &m) { m.connected = true; });
    reg.noteStoreError("web\n1\xfe");
    std::string text = reg.render();
    CHECK_THAT(text, Catch::Contains("daxprobe_vm_connected{vm=\"web\\\\x0a1\\\\xfe\"} 1"));
    CHECK_THAT(text, Catch::Contains(
                         "daxprobe_collector_vm_store_errors_total{vm=\"web\\\\x0a1\\\\xfe\"} 1"));
    CHECK_THAT(text, Catch::Contains("daxprobe_vm_store_held{vm=\"web\\\\x0a1\\\\xfe\"} 0"));
    CHECK_THAT(text, Catch::Contains("\ndaxprobe_collector_store_errors_total 1\n"));
    for (std::size_t at = 0; (at = text.find('\n', at)) != std::string::npos; ++at)
        CHECK((at + 1 == text.size() || text[at + 1] == '#' || text[at + 1] == 'd'));
}

TEST_CASE("config file: fleet limits and the log level", "[collector][options][limit]")
{
    TempDir dir;
    std::string path = dir.path() + "/collector.conf";
    CollectorOptions defaults;
    CHECK(defaults.maxChannels >= 1000); // sized for a fleet of 1,000 guests
    std::ofstream(path) << "max-guests 2000\nguest-rate 200\nguest-byte-rate 4194304\n"
                           "log-level debug\n";
    CollectorOptions o;
    std::string level = "info";
    REQUIRE(loadConfigFile(path, o, &level));
    CHECK(o.maxChannels == 2000);
    CHECK(o.messagesPerSecond == 200);
    CHECK(o.bytesPerSecond == 4194304);
    CHECK(level == "debug");
    for (const char *bad :
         {"max-guests 0\n", "max-guests -5\n", "guest-rate x\n", "log-level loud\n"}) {
        std::ofstream(path) << bad;
        CollectorOptions o2;
        INFO(bad);
        CHECK_FALSE(loadConfigFile(path, o2, &level));
    }
}
