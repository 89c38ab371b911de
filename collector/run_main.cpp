// daxprobe-collector-run: the daemon behind `daxprobe-collector run` (which
// execs it, same pid, same arguments). It links what `query` must not: the
// HTTP server for /metrics, spdlog, the whole collector.
#include <malloc.h>

#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "collector.h"

using namespace daxprobe;
using namespace daxprobe::collector;

namespace
{

// Flags the user gave win over the config file: load the file, then keep
// each value whose flag was not given.
template <typename T>
void fromFileUnlessGiven(CLI::App *run, const char *flag, T &value, const T &fileValue)
{
    if (!run->get_option(flag)->count())
        value = fileValue;
}

} // namespace

int main(int argc, char **argv)
{
    // SQLite frees its transaction memory at every commit; glibc's default
    // dynamic trim threshold then hands the heap top back to the kernel and
    // takes it again for the next one (brk was a fifth of the CPU). Keep up
    // to 8 MiB of freed heap; more than that is still returned.
    mallopt(M_TRIM_THRESHOLD, 8 << 20);
    mallopt(M_MMAP_THRESHOLD, 1 << 20);

    CLI::App app{"daxprobe-collector: gathers daxprobe guest reports on the host"};
    app.require_subcommand(1);

    CollectorOptions o;
    std::vector<std::string> sockets;
    std::string config, logLevel = "info";
    auto *run =
        app.add_subcommand("run", "Connect to guest channels, store reports, serve /metrics");
    run->add_option("--socket", sockets, "A QEMU chardev socket: [NAME=]PATH (repeatable)");
    run->add_option("--config", config, "Config file (see collector/README in PROTOCOL.md)");
    run->add_option("--watch-dir", o.watchDirs,
                    "Directory of channel sockets to watch (repeatable)");
    run->add_option("--watch-name", o.watchName,
                    "Socket file name to pick up in watched dirs ('*': any)")
        ->capture_default_str();
    run->add_option("--state-dir", o.stateDir,
                    "Where collector.db lives (default $STATE_DIRECTORY or /var/lib/daxprobe)");
    run->add_option("--metrics-listen", o.metricsListen, "HOST:PORT for /metrics ('' disables)")
        ->capture_default_str();
    run->add_option("--max-rows", o.maxRowsPerVm, "Reports kept per VM")->capture_default_str();
    run->add_option("--max-bytes", o.maxBytesPerVm, "Report bytes kept per VM")
        ->capture_default_str();
    run->add_option("--max-guests", o.maxChannels, "Guests served at once (more are ignored)")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    run->add_option("--guest-rate", o.messagesPerSecond,
                    "Messages per second one guest may send (burst: 10 s worth)")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    run->add_option("--guest-byte-rate", o.bytesPerSecond,
                    "Bytes per second one guest may send (burst: 4 s worth)")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    run->add_option("--log-level", logLevel,
                    "trace, debug (also each stored report), info, warn, error, off")
        ->capture_default_str()
        ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        int rc = app.exit(e);
        return rc == 0 ? 0 : 2;
    }

    spdlog::set_default_logger(spdlog::stderr_color_mt("daxprobe-collector"));
    if (!config.empty()) {
        CollectorOptions f;
        std::string fileLevel = logLevel;
        if (auto r = loadConfigFile(config, f, &fileLevel); !r) {
            spdlog::error("{}", r.error().describe());
            return 2;
        }
        if (o.stateDir.empty())
            o.stateDir = f.stateDir;
        fromFileUnlessGiven(run, "--metrics-listen", o.metricsListen, f.metricsListen);
        fromFileUnlessGiven(run, "--watch-name", o.watchName, f.watchName);
        fromFileUnlessGiven(run, "--max-rows", o.maxRowsPerVm, f.maxRowsPerVm);
        fromFileUnlessGiven(run, "--max-bytes", o.maxBytesPerVm, f.maxBytesPerVm);
        fromFileUnlessGiven(run, "--max-guests", o.maxChannels, f.maxChannels);
        fromFileUnlessGiven(run, "--guest-rate", o.messagesPerSecond, f.messagesPerSecond);
        fromFileUnlessGiven(run, "--guest-byte-rate", o.bytesPerSecond, f.bytesPerSecond);
        fromFileUnlessGiven(run, "--log-level", logLevel, fileLevel);
        o.sockets = f.sockets;
        o.watchDirs.insert(o.watchDirs.end(), f.watchDirs.begin(), f.watchDirs.end());
    }
    spdlog::set_level(spdlog::level::from_str(logLevel));
    o.burstMessages = o.messagesPerSecond * 10;
    o.burstBytes = o.bytesPerSecond * 4;
    for (const auto &s : sockets)
        o.sockets.push_back(parseSocketArg(s));
    if (o.sockets.empty() && o.watchDirs.empty()) {
        spdlog::error("nothing to collect from: give --socket, --watch-dir or --config");
        return 2;
    }
    auto collector = Collector::create(std::move(o));
    if (!collector) {
        spdlog::error("{}", collector.error().describe());
        return 2;
    }
    return (*collector)->run();
}
