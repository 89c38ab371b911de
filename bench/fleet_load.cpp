// fleet_load: N simulated guests for benchmarking daxprobe-collector. Each
// guest is a listening unix socket laid out as libvirt does
// (DIR/domain-I-gI/org.daxprobe.agent.0), so the collector finds them with
// --watch-dir. Each speaks the real protocol as the agent does: sentinel and
// greeting, answers to sync/info/ack, then pushes R reports (a real
// daxprobe.check/1 document) keeping at most W unacknowledged. Prints one
// JSON line: reports/s from the first report sent to the last ack received,
// and the ack latency (report sent -> the ack covering it) p50/p99.
// --rate R paces each guest at R reports/s (phases spread evenly over the
// fleet), as agents on their timers would: the ack latency of a collector
// that is not saturated. Without it, guests push as fast as acks allow.
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/unique_fd.h"
#include "protocol/line_decoder.h"
#include "protocol/message.h"
#include "protocol/schema.h"

using namespace daxprobe;
using Clock = std::chrono::steady_clock;

namespace
{

struct Guest {
    int index = 0;
    UniqueFD listenFd, conn;
    protocol::LineDecoder decoder{1 << 20};
    std::string out, head, tail; // a report line is head + seq + tail
    std::uint64_t nextSeq = 1, acked = 0;
    std::deque<Clock::time_point> sentAt; // of seq acked+1 .. nextSeq-1
    bool pushing = false;
    Clock::time_point due{}; // paced: when the next report is due
};

struct Run {
    int guests = 1, window = 64;
    double rate = 0; // reports/s per guest; 0: unpaced
    std::uint64_t reports = 1000;
    std::string dir, reportFile;
};

std::vector<double> latenciesUs;
Clock::time_point firstSend{}, lastAck{};
bool started = false;

void fillWindow(Guest &g, const Run &run)
{
    if (!g.pushing)
        return;
    while (g.nextSeq <= run.reports && g.nextSeq - g.acked - 1 < std::uint64_t(run.window)) {
        Clock::time_point now = Clock::now();
        if (run.rate > 0) {
            if (now < g.due)
                break;
            g.due += std::chrono::duration_cast<Clock::duration>(
                std::chrono::duration<double>(1.0 / run.rate));
        }
        g.out += g.head + std::to_string(g.nextSeq++) + g.tail;
        g.sentAt.push_back(now);
        if (!started) {
            started = true;
            firstSend = now;
        }
    }
}

void flush(Guest &g)
{
    while (!g.out.empty()) {
        ssize_t n = ::send(g.conn.get(), g.out.data(), g.out.size(), MSG_NOSIGNAL);
        if (n <= 0)
            return; // EAGAIN: EPOLLOUT brings us back
        g.out.erase(0, static_cast<std::size_t>(n));
    }
}

void onLine(Guest &g, const std::string &line, const Run &run)
{
    auto m = protocol::decode(line, protocol::kCommandLimits);
    if (!m || m->kind != protocol::Message::Kind::Command)
        return;
    protocol::json reply;
    if (m->name == "sync") {
        g.out.push_back(static_cast<char>(0xFF));
        reply = protocol::makeReturn(m->payload["id"], m->id);
        if (!g.pushing && run.rate > 0) // this guest's phase within one period
            g.due = Clock::now() +
                    std::chrono::duration_cast<Clock::duration>(
                        std::chrono::duration<double>(double(g.index) / run.guests / run.rate));
        g.pushing = true;
    } else if (m->name == "info") {
        reply = protocol::makeReturn({{"protocol", protocol::kProtocolVersion},
                                      {"agent",
                                       {{"machine_id", fmt::format("m{}", g.index)},
                                        {"hostname", fmt::format("g{}", g.index)},
                                        {"stream", fmt::format("5eed{}", g.index)}}}},
                                     m->id);
    } else if (m->name == "ack") {
        auto a = protocol::parseAckArguments(m->payload);
        if (a && a->seq > g.acked) {
            Clock::time_point now = Clock::now();
            for (; g.acked < a->seq && !g.sentAt.empty(); ++g.acked) {
                latenciesUs.push_back(
                    std::chrono::duration<double, std::micro>(now - g.sentAt.front()).count());
                g.sentAt.pop_front();
            }
            lastAck = now;
        }
        reply = protocol::makeReturn({{"acked", 1}, {"pending", g.nextSeq - 1 - g.acked}}, m->id);
    } else {
        reply = protocol::makeReturn(protocol::json::object(), m->id);
    }
    g.out += protocol::encode(reply);
    fillWindow(g, run);
}

std::string readFile(const std::string &path)
{
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

} // namespace

int main(int argc, char **argv)
{
    Run run;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string k = argv[i], v = argv[i + 1];
        if (k == "--guests")
            run.guests = std::stoi(v);
        else if (k == "--reports")
            run.reports = std::stoull(v);
        else if (k == "--window")
            run.window = std::stoi(v);
        else if (k == "--rate")
            run.rate = std::stod(v);
        else if (k == "--dir")
            run.dir = v;
        else if (k == "--report")
            run.reportFile = v;
    }
    if (run.dir.empty() || run.reportFile.empty()) {
        fmt::print(stderr, "usage: fleet_load --dir DIR --report CHECK.json [--guests N] "
                           "[--reports PER_GUEST] [--window W] [--rate PER_GUEST_PER_S]\n");
        return 2;
    }
    auto doc = protocol::json::parse(readFile(run.reportFile), nullptr, false);
    if (doc.is_discarded()) {
        fmt::print(stderr, "fleet_load: {} is not JSON\n", run.reportFile);
        return 2;
    }
    rlimit rl{};
    if (::getrlimit(RLIMIT_NOFILE, &rl) == 0) { // two fds per guest
        rl.rlim_cur = rl.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &rl);
    }
    constexpr std::uint64_t kMark = 9007199254740991ull; // replaced by each seq
    UniqueFD ep(::epoll_create1(EPOLL_CLOEXEC));
    std::vector<Guest> guests(static_cast<std::size_t>(run.guests));
    for (int i = 0; i < run.guests; ++i) {
        Guest &g = guests[static_cast<std::size_t>(i)];
        g.index = i;
        std::string line = protocol::encode(protocol::makeReportEvent(
            {fmt::format("5eed{}", i), kMark, "interval", doc, {{"meminfo", {{"Cached", 1}}}}, 0}));
        auto at = line.find(std::to_string(kMark));
        g.head = line.substr(0, at);
        g.tail = line.substr(at + std::to_string(kMark).size());
        std::string sub = fmt::format("{}/domain-{}-g{}", run.dir, i, i);
        ::mkdir(sub.c_str(), 0700);
        std::string path = sub + "/org.daxprobe.agent.0";
        g.listenFd.reset(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        path.copy(addr.sun_path, sizeof(addr.sun_path) - 1);
        ::unlink(path.c_str());
        if (::bind(g.listenFd.get(), reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) < 0 ||
            ::listen(g.listenFd.get(), 8) < 0) {
            fmt::print(stderr, "fleet_load: {}: {}\n", path, Error::errnoName(errno));
            return 1;
        }
        epoll_event ev{EPOLLIN, {}};
        ev.data.u64 = static_cast<std::uint64_t>(i) << 1;
        ::epoll_ctl(ep.get(), EPOLL_CTL_ADD, g.listenFd.get(), &ev);
    }
    fmt::print(stderr, "fleet_load: {} guests listening under {}\n", run.guests, run.dir);
    std::fflush(stderr);

    std::uint64_t total = run.reports * static_cast<std::uint64_t>(run.guests), done = 0;
    std::vector<epoll_event> events(1024);
    char buf[65536];
    while (done < total) {
        int timeout = 60000;
        if (run.rate > 0) { // wake for the next report due
            Clock::time_point now = Clock::now(), next = now + std::chrono::seconds(60);
            for (Guest &g : guests) {
                if (g.pushing && g.conn && g.nextSeq <= run.reports && g.due <= now) {
                    fillWindow(g, run);
                    flush(g);
                }
                if (g.pushing && g.conn && g.nextSeq <= run.reports)
                    next = std::min(next, g.due);
            }
            timeout = static_cast<int>(
                std::chrono::ceil<std::chrono::milliseconds>(next - Clock::now()).count());
            timeout = std::clamp(timeout, 0, 60000);
        }
        int n = ::epoll_wait(ep.get(), events.data(), static_cast<int>(events.size()), timeout);
        if (n == 0 && run.rate > 0)
            continue;
        if (n == 0) {
            fmt::print(stderr, "fleet_load: no progress for 60 s ({} of {} acked)\n", done, total);
            return 1;
        }
        for (int e = 0; e < n; ++e) {
            std::uint64_t tag = events[static_cast<std::size_t>(e)].data.u64;
            Guest &g = guests[tag >> 1];
            if (!(tag & 1)) { // the collector connects (again)
                UniqueFD c(
                    ::accept4(g.listenFd.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
                if (!c)
                    continue;
                g.conn = std::move(c);
                g.decoder = protocol::LineDecoder(1 << 20);
                g.out.clear();
                g.pushing = false;
                g.nextSeq = g.acked + 1; // resend what was not acked, as the agent does
                g.sentAt.clear();
                g.out.push_back(static_cast<char>(0xFF));
                g.out += protocol::encode(protocol::makeGreeting(
                    {fmt::format("m{}", g.index), fmt::format("g{}", g.index),
                     fmt::format("5eed{}", g.index), "bench"},
                    protocol::kReportLimits));
                epoll_event ev{EPOLLIN | EPOLLOUT | EPOLLET, {}};
                ev.data.u64 = tag | 1;
                ::epoll_ctl(ep.get(), EPOLL_CTL_ADD, g.conn.get(), &ev);
                flush(g);
                continue;
            }
            std::uint64_t before = g.acked;
            for (;;) {
                ssize_t r = ::read(g.conn.get(), buf, sizeof(buf));
                if (r <= 0) {
                    if (r == 0) {
                        g.conn.reset();
                        g.pushing = false;
                    }
                    break;
                }
                for (auto &f : g.decoder.feed(std::string_view(buf, static_cast<std::size_t>(r))))
                    if (f.kind == protocol::LineDecoder::Frame::Kind::Line)
                        onLine(g, f.text, run);
            }
            done += g.acked - before;
            if (g.conn)
                flush(g);
        }
    }
    std::sort(latenciesUs.begin(), latenciesUs.end());
    auto pct = [](double p) {
        return latenciesUs.empty() ? 0.0
                                   : latenciesUs[std::min(
                                         latenciesUs.size() - 1,
                                         static_cast<std::size_t>(p * double(latenciesUs.size())))];
    };
    double secs = std::chrono::duration<double>(lastAck - firstSend).count();
    fmt::print("{{\"guests\": {}, \"reports\": {}, \"report_bytes\": {}, \"seconds\": {:.4f}, "
               "\"reports_per_s\": {:.1f}, \"ack_p50_ms\": {:.3f}, \"ack_p99_ms\": {:.3f}}}\n",
               run.guests, total, guests[0].head.size() + guests[0].tail.size() + 1, secs,
               double(total) / secs, pct(0.50) / 1000, pct(0.99) / 1000);
    return 0;
}
