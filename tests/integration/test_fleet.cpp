// The collector at fleet scale, in behaviour (benchmarks measure the speed,
// bench/): one transaction per wake for every guest's reports, acks only
// after it, the guest limit, and acks' answers free of a guest's rate.
#include <catch2/catch.hpp>

#include "tests/integration/harness.h"

using namespace itest;

namespace
{

// A QEMU chardev socket nobody serves: the collector connects (the kernel's
// backlog accepts) and the guest says nothing.
struct SilentGuest {
    UniqueFD fd;
    explicit SilentGuest(const std::string &path)
    {
        fd.reset(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        path.copy(addr.sun_path, path.size());
        REQUIRE(::bind(fd.get(), reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) == 0);
        REQUIRE(::listen(fd.get(), 4) == 0);
    }
};

} // namespace

TEST_CASE("one wake commits every guest's reports in one transaction, then acks them",
          "[integration][fleet][batch]")
{
    TempDir dir;
    FakeGuest guest;
    std::vector<std::unique_ptr<AgentDaemon>> agents;
    std::vector<AgentDaemon *> raw;
    auto opts = collectorOptions(dir.path());
    for (int i = 0; i < 3; ++i) {
        std::string sock = dir.path() + fmt::format("/g{}.sock", i);
        agents.push_back(makeAgent(sock, guest, fmt::format("ba{}", i)));
        raw.push_back(agents.back().get());
        opts.sockets.push_back({fmt::format("g{}", i), sock, {}, false});
    }
    auto coll = makeCollector(opts);
    auto allIdle = [&] {
        for (int i = 0; i < 3; ++i)
            if (stored(*coll, fmt::format("g{}", i)) != 1 || agents[i]->session().queue().size())
                return false;
        return true;
    };
    REQUIRE(pump(raw, coll.get(), allIdle));

    for (auto *a : raw) {
        a->session().produceReport("interval");
        a->session().produceReport("interval");
        REQUIRE(a->runOnce(0)); // both reports are in the guest's socket
    }
    std::uint64_t before = coll->store().commits();
    REQUIRE(coll->runOnce(1000)); // the reports wake it at once
    CHECK(coll->store().commits() == before + 1);
    for (int i = 0; i < 3; ++i)
        CHECK(stored(*coll, fmt::format("g{}", i)) == 2 + 1);
    // The acks went out after that commit: every agent forgets both reports.
    REQUIRE(pump(raw, coll.get(), [&] {
        for (auto *a : raw)
            if (a->session().queue().size())
                return false;
        return true;
    }));
}

TEST_CASE("the 257th guest is served by default; --max-guests bounds the set",
          "[integration][fleet][limit]")
{
    TempDir dir;
    std::vector<std::unique_ptr<SilentGuest>> silent;
    auto opts = collectorOptions(dir.path());
    for (int i = 0; i < 256; ++i) {
        std::string sock = dir.path() + fmt::format("/s{}.sock", i);
        silent.push_back(std::make_unique<SilentGuest>(sock));
        opts.sockets.push_back({fmt::format("s{}", i), sock, {}, false});
    }
    FakeGuest guest;
    std::string sock = dir.path() + "/last.sock";
    auto agent = makeAgent(sock, guest, "2570");
    opts.sockets.push_back({"last", sock, {}, false});
    {
        auto coll = makeCollector(opts);
        CHECK(coll->channels().size() == 257);
        REQUIRE(pump({agent.get()}, coll.get(), [&] { return stored(*coll, "last") == 1; }));
        CHECK(coll->connected("s255"));
    }
    REQUIRE(pump({agent.get()}, nullptr, [&] { return !agent->session().connected(); }));
    opts.maxChannels = 256;
    auto coll = makeCollector(opts);
    CHECK(coll->channels().size() == 256);
    CHECK_FALSE(coll->channels().count("last"));
}

TEST_CASE("the agent's answers to acks do not count against its message rate",
          "[integration][fleet][rate]")
{
    TempDir dir;
    FakeGuest guest;
    std::string sock = dir.path() + "/vm1.sock";
    auto agent = makeAgent(sock, guest, "a7e1");
    auto opts = collectorOptions(dir.path());
    opts.sockets.push_back({"vm1", sock, {}, false});
    // 40 messages and (practically) no refill: 30 reports, each with its own
    // ack, fit only if the answers to those acks are free.
    opts.burstMessages = 40;
    opts.messagesPerSecond = 1e-6;
    auto coll = makeCollector(opts);
    REQUIRE(pump({agent.get()}, coll.get(), [&] {
        return stored(*coll, "vm1") == 1 && agent->session().queue().size() == 0;
    }));
    for (int i = 0; i < 30; ++i) {
        agent->session().produceReport("interval");
        INFO("report " << i + 2);
        REQUIRE(pump(
            {agent.get()}, coll.get(), [&] { return agent->session().queue().size() == 0; }, {},
            200));
    }
    CHECK(stored(*coll, "vm1") == 31);
    CHECK(coll->channels().at("vm1").ingestor()->stats().ackReplies >= 30);
}
