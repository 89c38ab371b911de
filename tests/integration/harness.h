#pragma once

#include <sys/socket.h>
#include <sys/un.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "agent/daemon/daemon.h"
#include "collector/collector.h"
#include "tests/unit/collector/tmpdir.h"

namespace itest
{

using namespace daxprobe;
using nlohmann::json;

// A fake check whose verdict a test can change.
struct FakeGuest {
    std::string verdict = "dax_verified";
    AgentHooks hooks()
    {
        return {[this] {
                    return json{{"schema", "daxprobe.check/1"}, {"verdict", {{"code", verdict}}}};
                },
                [] {
                    return json{{"meminfo", {{"Cached", 0}}}};
                }};
    }
};

inline std::unique_ptr<AgentDaemon> makeAgent(const std::string &socket, FakeGuest &guest,
                                              const std::string &stream)
{
    DaemonOptions o;
    o.listenPath = socket;
    o.intervalSeconds = 3600; // tests push reports explicitly
    o.recheckSeconds = 0;
    o.handleSignals = false;
    o.watchMounts = false;
    auto a = AgentDaemon::create(o, {"machine-" + stream, "host-" + stream, stream, "test"},
                                 guest.hooks());
    REQUIRE(a);
    return std::move(*a);
}

inline collector::CollectorOptions collectorOptions(const std::string &stateDir)
{
    collector::CollectorOptions o;
    o.stateDir = stateDir;
    o.metricsListen = "";
    o.handleSignals = false;
    o.backoffInitialMs = 1; // reconnect at once: tests wait on state, not on time
    o.backoffMaxMs = 20;
    o.hostFactsIntervalMs = 3600 * 1000;
    return o;
}

inline std::unique_ptr<collector::Collector> makeCollector(collector::CollectorOptions o)
{
    auto c = collector::Collector::create(std::move(o));
    REQUIRE(c);
    return std::move(*c);
}

// Turns both event loops until `done` holds. The bound is on iterations, not
// time: a failing test ends, a slow machine does not fail it.
// Every loop turns at least once before `done` is asked, so a caller that
// wants "let the collector notice this" gets a real step, not an early return.
inline bool pump(const std::vector<AgentDaemon *> &agents, collector::Collector *c,
                 const std::function<bool()> &done, const std::function<void()> &each = {},
                 int maxIterations = 20000)
{
    for (int i = 0; i < maxIterations; ++i) {
        for (auto *a : agents)
            REQUIRE(a->runOnce(0));
        if (each)
            each();
        if (c)
            REQUIRE(c->runOnce(1));
        if (done())
            return true;
    }
    return false;
}

// The value of one exposition line (`name{labels} value`), or -1 when the
// line is absent: "not 0" must not be satisfied by a missing line.
inline long long metricValue(const std::string &exposition, const std::string &series)
{
    std::size_t at = 0;
    while ((at = exposition.find(series + " ", at)) != std::string::npos) {
        if (at == 0 || exposition[at - 1] == '\n')
            return std::stoll(exposition.substr(at + series.size() + 1));
        at += series.size();
    }
    return -1;
}

inline std::uint64_t stored(collector::Collector &c, const std::string &vm)
{
    auto n = c.store().reportCount(vm);
    return n ? *n : 0;
}

// A hostile "guest": a listening socket whose accepted peer the test writes.
struct RogueGuest {
    UniqueFD listenFd, peer;
    std::string path;
    explicit RogueGuest(std::string p) : path(std::move(p))
    {
        listenFd.reset(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        path.copy(addr.sun_path, path.size());
        REQUIRE(::bind(listenFd.get(), reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) == 0);
        REQUIRE(::listen(listenFd.get(), 4) == 0);
    }
    int accepted = 0;
    // Accepts, then writes `chunk` until the socket is full or gone.
    void pumpOut(const std::string &chunk)
    {
        if (!peer) {
            peer.reset(::accept4(listenFd.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
            if (!peer)
                return;
            ++accepted;
        }
        for (int i = 0; i < 64; ++i)
            if (::send(peer.get(), chunk.data(), chunk.size(), MSG_NOSIGNAL | MSG_DONTWAIT) <= 0) {
                if (errno != EAGAIN)
                    peer.reset();
                return;
            }
    }
};

} // namespace itest
