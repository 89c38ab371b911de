// Storage faults with a real agent, a real collector and real SQLite: the
// database locked by another process, a full filesystem, a read-only state
// directory. The rule under test (protocol/PROTOCOL.md): nothing the agent
// was told is stored may be missing from the store, nothing is stored twice,
// and the agent keeps what was not acknowledged.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <set>

#include "tests/integration/harness.h"

using namespace itest;

extern char **environ;

namespace
{

// `sqlite3 DB` in another process holding BEGIN EXCLUSIVE until release().
class Locker
{
  public:
    explicit Locker(const std::string &db)
    {
        int in[2], out[2];
        REQUIRE(::pipe2(in, O_CLOEXEC) == 0);
        REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, in[0], 0);
        posix_spawn_file_actions_adddup2(&fa, out[1], 1);
        std::string arg0 = "sqlite3";
        char *argv[] = {arg0.data(), const_cast<char *>(db.c_str()), nullptr};
        int rc = ::posix_spawnp(&pid_, "sqlite3", &fa, nullptr, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        ::close(in[0]);
        ::close(out[1]);
        toChild_.reset(in[1]);
        fromChild_.reset(out[0]);
        REQUIRE(rc == 0);
        say("BEGIN EXCLUSIVE;\nSELECT 'locked';\n");
        // Wait for the shell to hold the lock: it prints only after BEGIN succeeded.
        std::string got;
        char buf[64];
        while (got.find("locked") == std::string::npos) {
            ssize_t n = ::read(fromChild_.get(), buf, sizeof(buf));
            REQUIRE(n > 0);
            got.append(buf, static_cast<std::size_t>(n));
        }
    }
    ~Locker() { release(); }
    void release()
    {
        if (pid_ <= 0)
            return;
        say("ROLLBACK;\n.quit\n");
        toChild_.reset();
        int status = 0;
        ::waitpid(pid_, &status, 0);
        pid_ = -1;
    }

  private:
    void say(const std::string &s)
    {
        REQUIRE(::write(toChild_.get(), s.data(), s.size()) == static_cast<ssize_t>(s.size()));
    }
    pid_t pid_ = -1;
    UniqueFD toChild_, fromChild_;
};

// A check result big enough that every report needs fresh database pages.
struct BigGuest {
    std::size_t pad = 0;
    AgentHooks hooks()
    {
        return {[this] {
                    return json{{"schema", "daxprobe.check/1"},
                                {"verdict", {{"code", "dax_verified"}}},
                                {"pad", std::string(pad, 'x')}};
                },
                [] {
                    return json{{"meminfo", {{"Cached", 0}}}};
                }};
    }
};

std::unique_ptr<AgentDaemon> makeBigAgent(const std::string &socket, BigGuest &guest,
                                          const std::string &stream)
{
    DaemonOptions o;
    o.listenPath = socket;
    o.intervalSeconds = 3600;
    o.recheckSeconds = 0;
    o.handleSignals = false;
    o.watchMounts = false;
    o.watchDevices = false;
    auto a = AgentDaemon::create(o, {"m-" + stream, "h-" + stream, stream, "test"}, guest.hooks());
    REQUIRE(a);
    return std::move(*a);
}

std::vector<std::uint64_t> storedSeqs(collector::Store &store, const std::string &vm)
{
    auto h = store.history(vm, 100000);
    REQUIRE(h);
    std::vector<std::uint64_t> out;
    for (const auto &r : *h)
        out.push_back(r.seq);
    std::sort(out.begin(), out.end());
    return out;
}

// Every report the agent no longer holds was acknowledged: it must be stored.
bool ackedAreStored(AgentDaemon &agent, collector::Store &store, const std::string &vm)
{
    std::set<std::uint64_t> pending;
    for (const auto &e : agent.session().queue().entries())
        pending.insert(e.seq);
    auto seqs = storedSeqs(store, vm);
    std::set<std::uint64_t> stored(seqs.begin(), seqs.end());
    for (std::uint64_t s = 1; s <= agent.session().lastSeq(); ++s)
        if (!pending.count(s) && !stored.count(s)) {
            UNSCOPED_INFO("seq " << s << " acknowledged but not stored");
            return false;
        }
    return agent.session().queue().dropped() == 0;
}

std::uint64_t storeErrors(collector::Collector &c)
{
    std::string page = c.metrics().render();
    auto at = page.find("\ndaxprobe_collector_store_errors_total ");
    REQUIRE(at != std::string::npos);
    return std::stoull(page.substr(at + 39));
}

collector::CollectorOptions faultOptions(const std::string &stateDir, const std::string &sock)
{
    auto o = collectorOptions(stateDir);
    o.sockets.push_back({"vm1", sock, {}, false});
    // Resync soon after a failure: the test waits on state, not on time.
    o.storeRetryInitialMs = 1;
    o.storeRetryMaxMs = 4;
    return o;
}

// A tmpfs of `bytes` mounted on dir, unmounted on scope exit.
struct TmpfsMount {
    std::string dir;
    bool ok = false;
    TmpfsMount(std::string d, std::size_t bytes, unsigned long flags = 0) : dir(std::move(d))
    {
        ::mkdir(dir.c_str(), 0700);
        ok = ::mount("none", dir.c_str(), "tmpfs", flags,
                     fmt::format("size={},mode=0700", bytes).c_str()) == 0;
    }
    ~TmpfsMount()
    {
        if (ok)
            ::umount2(dir.c_str(), MNT_DETACH);
    }
    bool remount(unsigned long flags, std::size_t bytes)
    {
        return ::mount("none", dir.c_str(), "tmpfs", MS_REMOUNT | flags,
                       fmt::format("size={},mode=0700", bytes).c_str()) == 0;
    }
};

} // namespace

TEST_CASE("database locked by another process: acks wait, nothing acknowledged is lost",
          "[faults][locked]")
{
    TempDir dir;
    FakeGuest guest;
    std::string sock = dir.path() + "/vm1.sock";
    auto agent = makeAgent(sock, guest, "10c1");
    auto coll = makeCollector(faultOptions(dir.path(), sock));
    auto invariant = [&] { REQUIRE(ackedAreStored(*agent, coll->store(), "vm1")); };

    REQUIRE(pump({agent.get()}, coll.get(), [&] {
        return stored(*coll, "vm1") == 1 && agent->session().queue().size() == 0;
    }));

    {
        Locker lock(dir.path() + "/collector.db");
        for (int i = 0; i < 3; ++i)
            agent->session().produceReport("interval");
        // Until the collector has failed, resynced and failed again.
        REQUIRE(pump(
            {agent.get()}, coll.get(), [&] { return storeErrors(*coll) >= 2; }, invariant));
        CHECK(agent->session().queue().size() == 3); // the agent kept all three
        CHECK_THAT(coll->metrics().render(),
                   Catch::Contains("daxprobe_vm_store_held{vm=\"vm1\"} 1"));
        invariant();
        lock.release();
    }
    // Reporting goes on: this one must not be acked over the three failed ones.
    agent->session().produceReport("interval");
    REQUIRE(pump(
        {agent.get()}, coll.get(),
        [&] { return agent->session().queue().size() == 0 && stored(*coll, "vm1") == 5; },
        invariant));
    CHECK(storedSeqs(coll->store(), "vm1") == std::vector<std::uint64_t>{1, 2, 3, 4, 5});
    CHECK(coll->connected("vm1")); // retried in place: no reconnect needed
    std::string page = coll->metrics().render();
    CHECK_THAT(page, Catch::Contains("daxprobe_vm_store_held{vm=\"vm1\"} 0"));
    CHECK_THAT(page, Catch::Contains("daxprobe_collector_reports_stored_total{vm=\"vm1\"} 5"));
}

TEST_CASE("a full state filesystem: nothing acknowledged is lost, all stored once space returns",
          "[faults][fs]")
{
    TempDir dir;
    TmpfsMount state(dir.path() + "/state", 2 << 20);
    REQUIRE(state.ok);
    BigGuest guest;
    guest.pad = 48 * 1024;
    std::string sock = dir.path() + "/vm1.sock";
    auto agent = makeBigAgent(sock, guest, "f011");
    auto coll = makeCollector(faultOptions(state.dir, sock));
    auto invariant = [&] { REQUIRE(ackedAreStored(*agent, coll->store(), "vm1")); };
    REQUIRE(pump({agent.get()}, coll.get(), [&] { return stored(*coll, "vm1") == 1; }));

    // Fill the filesystem to the last block.
    std::string filler = state.dir + "/filler";
    {
        UniqueFD f(::open(filler.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
        REQUIRE(f);
        std::string block(4096, 'f');
        while (::write(f.get(), block.data(), block.size()) > 0) {
        }
        REQUIRE(errno == ENOSPC);
    }
    // Report until one fails to commit (the WAL may still have room for a few).
    for (int i = 0; i < 40 && storeErrors(*coll) == 0; ++i) {
        agent->session().produceReport("interval");
        REQUIRE(pump(
            {agent.get()}, coll.get(),
            [&] { return storeErrors(*coll) > 0 || agent->session().queue().size() == 0; },
            invariant));
    }
    REQUIRE(storeErrors(*coll) > 0);
    for (int i = 0; i < 3; ++i)
        agent->session().produceReport("interval");
    REQUIRE(pump(
        {agent.get()}, coll.get(), [&] { return storeErrors(*coll) >= 3; }, invariant));
    CHECK(agent->session().queue().size() >= 4);

    REQUIRE(::unlink(filler.c_str()) == 0);
    REQUIRE(pump(
        {agent.get()}, coll.get(), [&] { return agent->session().queue().size() == 0; },
        invariant));
    std::vector<std::uint64_t> all;
    for (std::uint64_t s = 1; s <= agent->session().lastSeq(); ++s)
        all.push_back(s);
    CHECK(storedSeqs(coll->store(), "vm1") == all);
}

TEST_CASE("a read-only state directory is a clear error; the agent keeps its reports",
          "[faults][fs]")
{
    TempDir dir;
    TmpfsMount state(dir.path() + "/state", 4 << 20);
    REQUIRE(state.ok);
    FakeGuest guest;
    std::string sock = dir.path() + "/vm1.sock";
    auto opts = faultOptions(state.dir, sock);
    auto agent = makeAgent(sock, guest, "20c1");
    {
        auto first = makeCollector(opts);
        REQUIRE(pump({agent.get()}, first.get(), [&] {
            return stored(*first, "vm1") == 1 && agent->session().queue().size() == 0;
        }));
    }
    REQUIRE(state.remount(MS_RDONLY, 4 << 20));
    agent->session().produceReport("interval");
    auto refused = collector::Collector::create(opts);
    REQUIRE_FALSE(refused);
    CHECK_THAT(refused.error().describe(),
               Catch::Contains(state.dir) && Catch::Contains("not writable"));
    REQUIRE(pump({agent.get()}, nullptr, [&] { return !agent->session().connected(); }));
    CHECK(agent->session().queue().size() == 1);

    // The service manager restarts it once the directory is writable again.
    REQUIRE(state.remount(0, 4 << 20));
    auto second = makeCollector(opts);
    REQUIRE(
        pump({agent.get()}, second.get(), [&] { return agent->session().queue().size() == 0; }));
    CHECK(storedSeqs(second->store(), "vm1") == std::vector<std::uint64_t>{1, 2});
}
