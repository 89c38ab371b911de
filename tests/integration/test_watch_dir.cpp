// --watch-dir before the directory exists: libvirt creates its channel
// directory when the first VM with a channel starts, which can be long after
// the collector. The collector must pick it up then, and say so in its log.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include "tests/integration/harness.h"

using namespace itest;

namespace
{

// The collector's log lines, for the duration of a test.
struct LogCapture {
    std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink =
        std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(256);
    std::shared_ptr<spdlog::logger> previous = spdlog::default_logger();
    LogCapture()
    {
        auto logger = std::make_shared<spdlog::logger>("capture", sink);
        logger->set_pattern("%l %v");
        spdlog::set_default_logger(logger);
    }
    ~LogCapture() { spdlog::set_default_logger(previous); }
    bool has(const std::string &text) const
    {
        for (const auto &line : sink->last_formatted())
            if (line.find(text) != std::string::npos)
                return true;
        return false;
    }
};

} // namespace

TEST_CASE("a watch dir that does not exist yet is picked up when it appears",
          "[integration][watch]")
{
    LogCapture log;
    TempDir dir;
    // Three levels missing, as on a host where libvirt never ran.
    std::string libvirt = dir.path() + "/libvirt";
    std::string target = libvirt + "/channel/target";
    auto opts = collectorOptions(dir.path());
    opts.watchDirs.push_back(target + "/"); // a trailing slash is the same dir
    auto coll = makeCollector(opts);
    CHECK(log.has("warning watch dir " + target + " does not exist (yet): watching " + dir.path() +
                  " for it"));

    for (const auto &d : {libvirt, libvirt + "/channel", target}) {
        REQUIRE(::mkdir(d.c_str(), 0755) == 0);
        REQUIRE(pump({}, coll.get(), [&] { return true; })); // one real step
    }
    CHECK(log.has("info watch dir " + target + " appeared: watching it"));

    std::string domain = target + "/domain-3-late";
    REQUIRE(::mkdir(domain.c_str(), 0700) == 0);
    FakeGuest guest;
    auto agent = makeAgent(domain + "/org.daxprobe.agent.0", guest, "ab01");
    REQUIRE(pump({agent.get()}, coll.get(), [&] { return stored(*coll, "late") == 1; }));

    SECTION("removed and created again, it is picked up again")
    {
        agent.reset();
        ::unlink((domain + "/org.daxprobe.agent.0").c_str()); // the agent may have removed it
        REQUIRE(::rmdir(domain.c_str()) == 0);
        REQUIRE(::rmdir(target.c_str()) == 0);
        std::string waiting = "warning watch dir " + target + " does not exist (yet): watching " +
                              libvirt + "/channel for it";
        REQUIRE(pump({}, coll.get(), [&] { return log.has(waiting); }));
        REQUIRE(::mkdir(target.c_str(), 0755) == 0);
        REQUIRE(::mkdir(domain.c_str(), 0700) == 0);
        auto again = makeAgent(domain + "/org.daxprobe.agent.0", guest, "ab02");
        REQUIRE(pump({again.get()}, coll.get(), [&] { return stored(*coll, "late") == 2; }));
    }
}
