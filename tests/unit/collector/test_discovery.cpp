#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "base/unique_fd.h"
#include "collector/discovery.h"
#include "tests/unit/collector/tmpdir.h"

using namespace daxprobe;
using namespace daxprobe::collector;

namespace
{

// A unix socket file at path; listening (live) or left behind by a process
// that is gone (stale: the file stays, connect() is refused).
UniqueFD makeSocket(const std::string &path, bool live)
{
    UniqueFD fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    path.copy(addr.sun_path, path.size());
    REQUIRE(::bind(fd.get(), reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) == 0);
    if (!live)
        return UniqueFD();
    REQUIRE(::listen(fd.get(), 4) == 0);
    return fd;
}

void setMtime(const std::string &path, std::time_t sec)
{
    timespec ts[2] = {{sec, 0}, {sec, 0}};
    REQUIRE(::utimensat(AT_FDCWD, path.c_str(), ts, AT_SYMLINK_NOFOLLOW) == 0);
}

std::string channelIn(const std::string &dir, const std::string &sub)
{
    REQUIRE(::mkdir((dir + "/" + sub).c_str(), 0700) == 0);
    return dir + "/" + sub + "/org.daxprobe.agent.0";
}

} // namespace

TEST_CASE("libvirt domain directories: the name is the VM key", "[collector][discovery]")
{
    std::int64_t id = -1;
    CHECK(vmNameFromDir("domain-10-web", &id) == "web");
    CHECK(id == 10);
    CHECK(vmNameFromDir("domain-3-db-primary") == "db-primary");
    CHECK(vmNameFromDir("domain-x-web") == "domain-x-web");
    CHECK(vmNameFromDir("domain--web") == "domain--web");
    CHECK(vmNameFromDir("other") == "other");
}

TEST_CASE("a stale domain directory does not hide the live VM", "[collector][discovery]")
{
    TempDir dir;
    std::string stale = channelIn(dir.path(), "domain-9-web");
    std::string live = channelIn(dir.path(), "domain-10-web");
    auto keep = makeSocket(live, true);
    makeSocket(stale, false);
    // Even when the stale one is newer (a clock step, a touched file) and
    // sorts last ("9" > "10"), the one that answers wins.
    setMtime(live, 1000);
    setMtime(stale, 2000);

    Discovery d = discoverSockets({dir.path()}, "org.daxprobe.agent.0");
    REQUIRE(d.channels.size() == 1);
    CHECK(d.channels.at("web").socketPath == live);
    CHECK(d.channels.at("web").discovered);
    REQUIRE(d.why.count("web"));
    CHECK_THAT(d.why.at("web"), Catch::Contains("live") && Catch::Contains("10"));
    CHECK(d.subdirs.size() == 2);
}

TEST_CASE("with no live socket the newest wins, then the highest domain id",
          "[collector][discovery]")
{
    TempDir dir;
    std::string older = channelIn(dir.path(), "domain-12-web");
    std::string newer = channelIn(dir.path(), "domain-2-web");
    makeSocket(older, false);
    makeSocket(newer, false);
    setMtime(older, 1000);
    setMtime(newer, 2000);
    auto none = [](const std::string &) { return false; };
    CHECK(
        discoverSockets({dir.path()}, "org.daxprobe.agent.0", none).channels.at("web").socketPath ==
        newer);

    std::vector<SocketCandidate> tie = {{"web", "/a/domain-9-web/s", 9, 5, false},
                                        {"web", "/a/domain-10-web/s", 10, 5, false}};
    CHECK(chooseSocket(tie).domainId == 10);
}

TEST_CASE("a single socket is taken without probing it; other layouts", "[collector][discovery]")
{
    TempDir dir;
    makeSocket(channelIn(dir.path(), "domain-4-db"), false);
    makeSocket(dir.path() + "/mail.org.daxprobe.agent.0", false);
    REQUIRE(::mkdir((dir.path() + "/domain-5-empty").c_str(), 0700) == 0);
    int probes = 0;
    auto count = [&](const std::string &) {
        ++probes;
        return false;
    };
    Discovery d = discoverSockets({dir.path()}, "org.daxprobe.agent.0", count);
    CHECK(probes == 0);
    REQUIRE(d.channels.size() == 2);
    CHECK(d.channels.count("db"));
    CHECK(d.channels.at("mail").socketPath == dir.path() + "/mail.org.daxprobe.agent.0");
    CHECK(d.why.empty());

    // "*": any socket, named by its file.
    Discovery any = discoverSockets({dir.path()}, "*", count);
    CHECK(any.channels.count("mail.org.daxprobe.agent.0"));
    CHECK(any.channels.count("db"));
    // A missing directory is no error: libvirt creates it later.
    CHECK(discoverSockets({dir.path() + "/nope"}, "*").channels.empty());
}
