// Bounds on what guests and /metrics clients can make the collector do:
// work per wake, memory for unfinished lines, HTTP connections, time and
// body size. Counted in wakes and bytes, never in seconds.
#include <catch2/catch.hpp>

#include <csignal>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include <httplib.h>

#include "tests/integration/harness.h"

using namespace itest;

namespace
{

std::string floodReports(std::uint64_t &seq, int n)
{
    std::string out;
    for (int i = 0; i < n; ++i)
        out += protocol::encode(protocol::makeReportEvent(
            {"f100d", ++seq, "interval", {{"verdict", {{"code", "dax_verified"}}}}, nullptr, 0}));
    return out;
}

std::uint64_t gauge(const std::string &page, const std::string &name)
{
    auto at = page.find("\n" + name + " ");
    REQUIRE(at != std::string::npos);
    return std::stoull(page.substr(at + name.size() + 2));
}

UniqueFD tcpConnect(int port)
{
    UniqueFD fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd.get(), reinterpret_cast<sockaddr *>(&a), sizeof(a)) == 0);
    return fd;
}

} // namespace

TEST_CASE("a guest flooding valid reports does not delay another guest's ack",
          "[integration][bounds][fairness]")
{
    TempDir dir;
    FakeGuest guest;
    std::string good = dir.path() + "/good.sock";
    auto agent = makeAgent(good, guest, "9001");
    RogueGuest flood(dir.path() + "/flood.sock");
    auto opts = collectorOptions(dir.path());
    opts.sockets.push_back({"good", good, {}, false});
    opts.sockets.push_back({"flood", flood.path, {}, false});
    // Valid traffic within its allowance: no throttling to hide behind.
    opts.messagesPerSecond = opts.burstMessages = 1e9;
    opts.bytesPerSecond = opts.burstBytes = 1e12;
    auto coll = makeCollector(opts);

    std::uint64_t seq = 0;
    std::string burst = floodReports(seq, 400); // ~64 KiB: one read chunk
    auto floodReportsSeen = [&] {
        auto *ing = coll->channels().at("flood").ingestor();
        return ing ? ing->stats().reports : 0;
    };
    REQUIRE(pump(
        {agent.get()}, coll.get(),
        [&] {
            return stored(*coll, "good") == 1 && agent->session().queue().size() == 0 &&
                   floodReportsSeen() > 0;
        },
        [&] { flood.pumpOut(burst); }));

    for (int round = 0; round < 5; ++round) {
        flood.pumpOut(burst); // its socket stays full: a backlog of hundreds
        agent->session().produceReport("change");
        REQUIRE(agent->runOnce(0)); // the report is in the good guest's socket
        std::uint64_t before = floodReportsSeen();
        int wakes = 0;
        while (agent->session().queue().size() != 0 && wakes < 100) {
            REQUIRE(coll->runOnce(0));
            ++wakes;
            REQUIRE(agent->runOnce(0));
            flood.pumpOut(burst);
        }
        INFO("round " << round << ": " << wakes << " wakes, " << floodReportsSeen() - before
                      << " flood reports handled meanwhile");
        CHECK(wakes <= 2);
        CHECK(floodReportsSeen() - before <= 2 * opts.maxMessagesPerWake);
    }
    CHECK(coll->connected("flood")); // valid traffic: served, not punished
    CHECK(stored(*coll, "good") == 6);
}

TEST_CASE("unfinished lines of many guests stay within the memory budget",
          "[integration][bounds][memory]")
{
    TempDir dir;
    FakeGuest guest;
    std::string good = dir.path() + "/good.sock";
    auto agent = makeAgent(good, guest, "9002");
    std::vector<std::unique_ptr<RogueGuest>> rogues;
    auto opts = collectorOptions(dir.path());
    opts.sockets.push_back({"good", good, {}, false});
    for (int i = 0; i < 6; ++i) {
        rogues.push_back(std::make_unique<RogueGuest>(dir.path() + fmt::format("/half{}.sock", i)));
        opts.sockets.push_back({fmt::format("half{}", i), rogues.back()->path, {}, false});
    }
    opts.maxBufferedBytes = 256 * 1024;
    auto coll = makeCollector(opts);

    // Each holds 100 KiB of a line it never finishes (under the 1 MiB line cap).
    std::string half = "{\"event\":\"report\",\"data\":{\"pad\":\"" + std::string(100 * 1024, 'x');
    std::size_t peak = 0;
    int reports = 1;
    REQUIRE(pump(
        {agent.get()}, coll.get(),
        [&] {
            return stored(*coll, "good") >= 4 &&
                   coll->metrics().render().find("reason=\"memory_pressure\"") != std::string::npos;
        },
        [&] {
            for (auto &r : rogues)
                if (!r->peer)
                    r->pumpOut(half); // once per connection: then it goes quiet
            peak = std::max(peak, coll->bufferedBytes());
            REQUIRE(coll->bufferedBytes() <= opts.maxBufferedBytes);
            if (agent->session().queue().size() == 0 && reports < 4) {
                agent->session().produceReport("interval");
                ++reports;
            }
        }));
    INFO("peak buffered: " << peak);
    CHECK(peak > 0);
    CHECK(coll->connected("good"));
}

TEST_CASE("/metrics: bounded body, connections and time per request", "[integration][bounds][http]")
{
    TempDir dir;
    auto opts = collectorOptions(dir.path());
    opts.metricsListen = "127.0.0.1:0";
    opts.httpMaxConnections = 2;
    opts.httpRequestTimeoutMs = 300;
    auto coll = makeCollector(opts);
    REQUIRE(coll->metricsPort() > 0);

    // A 1 MiB body is refused by its announced size, not read into memory.
    {
        auto fd = tcpConnect(coll->metricsPort());
        std::string req = "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\n" +
                          std::string(1000, 'a');
        REQUIRE(::send(fd.get(), req.data(), req.size(), MSG_NOSIGNAL) ==
                static_cast<ssize_t>(req.size()));
        ::shutdown(fd.get(), SHUT_WR);
        std::string resp;
        char buf[4096];
        for (ssize_t n; (n = ::recv(fd.get(), buf, sizeof(buf), 0)) > 0;)
            resp.append(buf, static_cast<std::size_t>(n));
        CHECK_THAT(resp, Catch::StartsWith("HTTP/1.1 413"));
    }
    httplib::Client http("127.0.0.1", coll->metricsPort());
    http.set_read_timeout(30, 0);
    auto ok = http.Get("/metrics");
    REQUIRE(ok);
    CHECK(ok->status == 200);
    CHECK(gauge(ok->body, "daxprobe_collector_http_connections_limit") == 2);

    // Two clients connect and send nothing: they hold both slots...
    auto idle1 = tcpConnect(coll->metricsPort());
    auto idle2 = tcpConnect(coll->metricsPort());
    std::uint64_t active = 0;
    for (int i = 0; i < 1000000 && active < 2; ++i) {
        std::this_thread::yield(); // the server's threads accept them
        active = gauge(coll->metrics().render(), "daxprobe_collector_http_connections");
    }
    REQUIRE(active == 2);
    // ...so a third is served only once their time is up, never alongside them.
    auto third = http.Get("/metrics");
    REQUIRE(third);
    CHECK(third->status == 200);
    CHECK(gauge(third->body, "daxprobe_collector_http_connections") <= 2);
    // The idle ones were hung up on (EOF), not kept.
    char c;
    CHECK(::recv(idle1.get(), &c, 1, 0) == 0);
    CHECK(::recv(idle2.get(), &c, 1, 0) == 0);
}

TEST_CASE("SIGTERM ends the loop at its wake, whatever the guests' backlog",
          "[integration][bounds][signal]")
{
    TempDir dir;
    RogueGuest flood(dir.path() + "/flood.sock");
    auto opts = collectorOptions(dir.path());
    opts.sockets.push_back({"flood", flood.path, {}, false});
    opts.messagesPerSecond = opts.burstMessages = 1e9;
    opts.bytesPerSecond = opts.burstBytes = 1e12;
    opts.handleSignals = true; // SIGTERM/SIGINT blocked and read from a signalfd
    auto coll = makeCollector(opts);
    std::uint64_t seq = 0;
    std::string burst = floodReports(seq, 400);
    auto seen = [&] {
        auto *ing = coll->channels().at("flood").ingestor();
        return ing ? ing->stats().reports : 0;
    };
    REQUIRE(pump(
        {}, coll.get(), [&] { return seen() > 0; }, [&] { flood.pumpOut(burst); }));
    flood.pumpOut(burst);

    std::uint64_t before = seen();
    REQUIRE(::kill(::getpid(), SIGTERM) == 0); // pending: only the signalfd sees it
    REQUIRE(coll->runOnce(0));
    CHECK(coll->stopping());
    CHECK(seen() == before);                    // not one more message once asked to stop
    CHECK(coll->channels().at("flood").busy()); // though there was work left

    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
}
