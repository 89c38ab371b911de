// daxprobe-collector-run: the daemon behind `daxprobe-collector run` (which
// execs it, same pid, same arguments). It links what `query` must not: the
// HTTP server for /metrics, spdlog, the whole collector.
#include <malloc.h>

#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include "base/logging.h"
#include "base/version.h"
#include "collector/collector.h"
#include "collector/run_options.h"

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

    CLI::App app{"daxprobe-collector: gathers daxprobe guest reports on the host",
                 "daxprobe-collector"};
    app.require_subcommand(1);
    app.set_version_flag("--version", versionString());
    RunArgs args;
    CollectorOptions &o = args.options;
    auto *run = addRunCommand(app, args);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        int rc = app.exit(e);
        return rc == 0 ? 0 : 2;
    }

    setupLogging("daxprobe-collector");
    if (!args.config.empty()) {
        CollectorOptions f;
        std::string fileLevel = args.logLevel;
        if (auto r = loadConfigFile(args.config, f, &fileLevel); !r) {
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
        fromFileUnlessGiven(run, "--log-level", args.logLevel, fileLevel);
        o.sockets = f.sockets;
        o.watchDirs.insert(o.watchDirs.end(), f.watchDirs.begin(), f.watchDirs.end());
    }
    spdlog::set_level(spdlog::level::from_str(args.logLevel));
    o.burstMessages = o.messagesPerSecond * 10;
    o.burstBytes = o.bytesPerSecond * 4;
    for (const auto &s : args.sockets) {
        auto socket = parseSocketArg(s);
        if (!socket) {
            spdlog::error("{}", socket.error().message);
            return 2;
        }
        o.sockets.push_back(std::move(*socket));
    }
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
