#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <httplib.h>

#include "tests/integration/harness.h"

using namespace itest;

TEST_CASE("agent reports reach the store and are acknowledged", "[integration]")
{
    TempDir dir;
    FakeGuest guest;
    std::string sock = dir.path() + "/vm1.sock";
    auto agent = makeAgent(sock, guest, "aa01");
    auto opts = collectorOptions(dir.path());
    opts.sockets.push_back({"vm1", sock, {}, false});
    opts.metricsListen = "127.0.0.1:0";
    auto coll = makeCollector(opts);

    REQUIRE(pump({agent.get()}, coll.get(), [&] {
        return stored(*coll, "vm1") == 1 && agent->session().queue().size() == 0;
    }));
    guest.verdict = "problems_found";
    agent->session().produceReport("change");
    REQUIRE(pump({agent.get()}, coll.get(), [&] {
        return stored(*coll, "vm1") == 2 && agent->session().queue().size() == 0;
    }));

    auto latest = coll->store().latest();
    REQUIRE(latest);
    REQUIRE(latest->size() == 1);
    CHECK(latest->front().verdict == "problems_found");
    CHECK(latest->front().hostname == "host-aa01");
    CHECK(latest->front().machineId == "machine-aa01");
    CHECK(latest->front().socket == sock);

    // The collector's own metrics endpoint, on an ephemeral loopback port.
    REQUIRE(coll->metricsPort() > 0);
    httplib::Client http("127.0.0.1", coll->metricsPort());
    auto res = http.Get("/metrics");
    REQUIRE(res);
    CHECK(res->status == 200);
    CHECK_THAT(res->body,
               Catch::Contains("daxprobe_vm_verdict{vm=\"vm1\",verdict=\"problems_found\"} 1"));
    CHECK_THAT(res->body, Catch::Contains("daxprobe_collector_reports_stored_total{vm=\"vm1\"} 2"));
    CHECK_THAT(res->body, Catch::Contains("daxprobe_vm_connected{vm=\"vm1\"} 1"));
}

TEST_CASE("collector restart: acked reports survive, unacked are resent, none duplicated",
          "[integration]")
{
    TempDir dir;
    FakeGuest guest;
    std::string sock = dir.path() + "/vm1.sock";
    auto agent = makeAgent(sock, guest, "bb02");
    auto opts = collectorOptions(dir.path());
    opts.sockets.push_back({"vm1", sock, {}, false});

    auto c1 = makeCollector(opts);
    for (int i = 0; i < 2; ++i)
        agent->session().produceReport("interval");
    REQUIRE(pump({agent.get()}, c1.get(),
                 [&] { return stored(*c1, "vm1") == 3 && agent->session().queue().size() == 0; }));

    c1.reset(); // the host goes away (a crash: no goodbye)
    REQUIRE(pump({agent.get()}, nullptr, [&] { return !agent->session().connected(); }));

    // While the host is away the agent keeps reporting into its queue.
    for (int i = 0; i < 4; ++i)
        agent->session().produceReport("interval");
    CHECK(agent->session().queue().size() == 4);

    auto c2 = makeCollector(opts);
    REQUIRE(pump({agent.get()}, c2.get(),
                 [&] { return stored(*c2, "vm1") == 7 && agent->session().queue().size() == 0; }));
    auto hist = c2->store().history("vm1", 100);
    REQUIRE(hist);
    REQUIRE(hist->size() == 7);
    for (std::size_t i = 0; i < hist->size(); ++i)
        CHECK(hist->at(i).seq == 7 - i);
    CHECK(agent->session().lastSeq() == 7);
}

TEST_CASE("agent restart starts a new stream without colliding with the old one", "[integration]")
{
    TempDir dir;
    FakeGuest guest;
    std::string sock = dir.path() + "/vm1.sock";
    auto opts = collectorOptions(dir.path());
    opts.sockets.push_back({"vm1", sock, {}, false});
    auto agent = makeAgent(sock, guest, "cc01");
    auto coll = makeCollector(opts);
    REQUIRE(pump({agent.get()}, coll.get(), [&] { return stored(*coll, "vm1") == 1; }));
    agent.reset(); // the guest reboots: its socket goes away
    REQUIRE(pump({}, coll.get(), [&] { return !coll->connected("vm1"); }));
    agent = makeAgent(sock, guest, "cc02"); // seq starts at 1 again
    REQUIRE(pump({agent.get()}, coll.get(), [&] {
        return stored(*coll, "vm1") == 2 && agent->session().queue().size() == 0;
    }));
    CHECK(coll->store().latest()->front().stream == "cc02");
}

TEST_CASE("a garbage-flooding guest is disconnected while another keeps reporting",
          "[integration][flood]")
{
    TempDir dir;
    FakeGuest guest;
    std::string good = dir.path() + "/good.sock";
    auto agent = makeAgent(good, guest, "dd01");
    RogueGuest rogue(dir.path() + "/rogue.sock");
    auto opts = collectorOptions(dir.path());
    opts.sockets.push_back({"good", good, {}, false});
    opts.sockets.push_back({"rogue", rogue.path, {}, false});
    auto coll = makeCollector(opts);

    std::string garbage;
    for (int i = 0; i < 64; ++i)
        garbage += "{\"event\":\"report\",\"data\":{\"seq\":\"nope\"}}\nnot json at all\n";
    int reports = 1;
    bool kicked = pump(
        {agent.get()}, coll.get(),
        [&] {
            return !coll->connected("rogue") && rogue.accepted > 0 && stored(*coll, "good") >= 5;
        },
        [&] {
            rogue.pumpOut(garbage);
            if (agent->session().queue().size() == 0 && reports < 5) {
                agent->session().produceReport("interval");
                ++reports;
            }
        });
    REQUIRE(kicked);
    CHECK(stored(*coll, "rogue") == 0); // nothing it sent was stored
    CHECK(coll->connected("good"));
    CHECK_THAT(coll->metrics().render(),
               Catch::Contains(
                   "daxprobe_collector_disconnects_total{vm=\"rogue\",reason=\"violation\"} 1"));
    // Penalised: not reconnected right away (penalty 60 s by default).
    CHECK(coll->channels().at("rogue").nextAttemptMs > collector::nowMs());
}

TEST_CASE("an endless line is cut off at the size limit", "[integration][flood]")
{
    TempDir dir;
    RogueGuest rogue(dir.path() + "/rogue.sock");
    auto opts = collectorOptions(dir.path());
    opts.sockets.push_back({"rogue", rogue.path, {}, false});
    auto coll = makeCollector(opts);
    std::string noNewline(64 * 1024, 'a');
    REQUIRE(pump(
        {}, coll.get(), [&] { return rogue.accepted > 0 && !coll->connected("rogue"); },
        [&] { rogue.pumpOut(noNewline); }));
    CHECK_THAT(coll->metrics().render(),
               Catch::Contains(
                   "daxprobe_collector_disconnects_total{vm=\"rogue\",reason=\"violation\"} 1"));
}

TEST_CASE("sockets appearing in a watched directory are picked up", "[integration][watch]")
{
    TempDir dir;
    std::string channels = dir.path() + "/channels";
    REQUIRE(::mkdir(channels.c_str(), 0700) == 0);
    auto opts = collectorOptions(dir.path());
    opts.watchDirs.push_back(channels);
    auto coll = makeCollector(opts);
    CHECK(coll->channels().empty());

    // libvirt's layout: <dir>/domain-<id>-<name>/<channel>
    std::string domain = channels + "/domain-7-web1";
    REQUIRE(::mkdir(domain.c_str(), 0700) == 0);
    REQUIRE(pump({}, coll.get(), [&] { return true; })); // one real step over the new directory
    CHECK(coll->channels().empty()); // a directory without a socket is no channel yet
    FakeGuest guest;
    auto agent = makeAgent(domain + "/org.daxprobe.agent.0", guest, "ee01");
    REQUIRE(pump({agent.get()}, coll.get(), [&] { return stored(*coll, "web1") == 1; }));
    CHECK(coll->channels().count("web1") == 1);
}

TEST_CASE("a guest sending valid reports too fast is throttled, not starving the other",
          "[integration][flood]")
{
    TempDir dir;
    FakeGuest guest;
    std::string good = dir.path() + "/good.sock";
    auto agent = makeAgent(good, guest, "ff01");
    RogueGuest fast(dir.path() + "/fast.sock");
    auto opts = collectorOptions(dir.path());
    opts.sockets.push_back({"good", good, {}, false});
    opts.sockets.push_back({"fast", fast.path, {}, false});
    opts.messagesPerSecond = 100;
    opts.burstMessages = 20;
    auto coll = makeCollector(opts);

    std::string burst;
    for (std::uint64_t seq = 1; seq <= 64; ++seq)
        burst += protocol::encode(protocol::makeReportEvent(
            {"abcd", seq, "interval", {{"verdict", {{"code", "dax_verified"}}}}, nullptr, 0}));
    int reports = 1;
    REQUIRE(pump(
        {agent.get()}, coll.get(),
        [&] {
            return metricValue(coll->metrics().render(),
                               "daxprobe_collector_throttled_total{vm=\"fast\"}") > 0 &&
                   stored(*coll, "good") >= 3;
        },
        [&] {
            fast.pumpOut(burst);
            if (agent->session().queue().size() == 0 && reports < 3) {
                agent->session().produceReport("interval");
                ++reports;
            }
        }));
    CHECK(coll->connected("fast")); // throttled, not punished: its reports are valid
    // The same 64 reports arrive again and again: what is stored is a gapless
    // run 1..k, each seq once (not merely "no more than was sent").
    auto hist = coll->store().history("fast", 1000);
    REQUIRE(hist);
    REQUIRE_FALSE(hist->empty());
    for (std::size_t i = 0; i < hist->size(); ++i)
        CHECK(hist->at(i).seq == hist->size() - i);
    CHECK(stored(*coll, "fast") == hist->size());
}
