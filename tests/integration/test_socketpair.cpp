#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include "agent/daemon/agent_session.h"
#include "base/unique_fd.h"
#include "collector/ingest.h"
#include "collector/store.h"
#include "tests/unit/collector/tmpdir.h"

using namespace daxprobe;
using namespace daxprobe::collector;
using nlohmann::json;

namespace
{

struct Pair {
    UniqueFD guest, host;
    Pair()
    {
        int fds[2];
        REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
        guest.reset(fds[0]);
        host.reset(fds[1]);
    }
};

std::string readAll(int fd)
{
    std::string out;
    char buf[65536];
    for (;;) {
        ssize_t n = ::recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (n <= 0)
            return out;
        out.append(buf, static_cast<std::size_t>(n));
    }
}

void writeAll(int fd, std::string_view s)
{
    while (!s.empty()) {
        ssize_t n = ::send(fd, s.data(), s.size(), MSG_NOSIGNAL);
        REQUIRE(n > 0);
        s.remove_prefix(static_cast<std::size_t>(n));
    }
}

} // namespace

TEST_CASE("disconnect mid-message: the half line is discarded, the report resent once",
          "[integration][socketpair]")
{
    TempDir dir;
    auto store = Store::open(dir.path() + "/c.db");
    REQUIRE(store);
    AgentSession agent({"m", "h", "ab12", "v"},
                       AgentHooks{[] {
                                      return json{{"verdict", {{"code", "dax_verified"}}}};
                                  },
                                  {}});
    IngestHooks hooks{};
    // The collector's path: receive, process, commit uncommitted(), afterCommit().
    auto feed = [&](Ingestor &host, std::string_view data) {
        host.receive(data);
        host.process(SIZE_MAX);
        if (host.uncommitted().empty())
            return;
        static const std::string vm = "vm";
        ChannelReports part{&vm, host.uncommitted()};
        host.afterCommit(store->addReports(std::span(&part, 1), 1));
    };

    agent.produceReport("start");
    agent.produceReport("interval");
    {
        Pair p;
        Ingestor host({}, hooks);
        agent.onConnect();
        std::string out(agent.output());
        // Greeting and the first report whole, the second one cut in half.
        std::size_t cut = out.rfind("{\"data\"") + 40;
        writeAll(p.guest.get(), out.substr(0, cut));
        feed(host, readAll(p.host.get()));
        CHECK(store->reportCount("vm").value() == 1);
        agent.onDisconnect(); // the host's ack for seq 1 never arrives
    }
    CHECK(agent.queue().size() == 2);
    {
        Pair p;
        Ingestor host({}, hooks);
        host.start(1);
        writeAll(p.host.get(), host.takeOutput());
        agent.onConnect();
        agent.onBytes(readAll(p.guest.get()));
        writeAll(p.guest.get(), agent.output());
        agent.consumed(agent.output().size());
        feed(host, readAll(p.host.get()));
        CHECK(host.stats().invalid == 0);
        writeAll(p.host.get(), host.takeOutput());
        agent.onBytes(readAll(p.guest.get()));
        CHECK(host.synced());
        CHECK(host.stats().duplicates >= 1);
    }
    CHECK(store->reportCount("vm").value() == 2);
    CHECK(agent.queue().size() == 0);
}
