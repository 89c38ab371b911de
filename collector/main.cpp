#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include "collector.h"
#include "logging.h"
#include "query.h"
#include "version.h"

using namespace daxprobe;
using namespace daxprobe::collector;

namespace
{

int runQuery(const std::string &stateDir, const std::string &vm, std::size_t limit, bool json)
{
    auto store = Store::openReadOnly(stateDir + "/collector.db");
    if (!store) {
        fmt::print(stderr, "daxprobe-collector: {}\n", store.error().describe());
        return 2;
    }
    if (vm.empty()) {
        auto vms = store->latest();
        if (!vms) {
            fmt::print(stderr, "daxprobe-collector: {}\n", vms.error().describe());
            return 2;
        }
        // replace: a VM name is a directory entry, not necessarily UTF-8.
        fmt::print("{}", json ? latestJson(*vms).dump(2, ' ', false,
                                                      nlohmann::json::error_handler_t::replace) +
                                    "\n"
                              : latestTable(*vms));
        return 0;
    }
    auto hist = store->history(vm, limit);
    if (!hist) {
        fmt::print(stderr, "daxprobe-collector: {}\n", hist.error().describe());
        return 2;
    }
    if (hist->empty()) {
        fmt::print(stderr, "daxprobe-collector: no reports for VM '{}'\n", printable(vm));
        return 1;
    }
    fmt::print("{}", json ? historyJson(vm, *hist).dump(2, ' ', false,
                                                        nlohmann::json::error_handler_t::replace) +
                                "\n"
                          : historyTable(vm, *hist));
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    CLI::App app{"daxprobe-collector: gathers daxprobe guest reports on the host",
                 "daxprobe-collector"};
    app.require_subcommand(1);
    app.set_version_flag("--version", versionString());
    app.set_help_all_flag("--help-all", "Show the options of every subcommand");

    CollectorOptions o;
    std::vector<std::string> sockets;
    std::string config;
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

    std::string qStateDir, qVm;
    std::size_t qLimit = 20;
    bool qJson = false;
    auto *query = app.add_subcommand("query", "Latest verdict per VM, or one VM's history");
    query->add_option("--state-dir", qStateDir, "Where collector.db lives");
    query->add_option("--vm", qVm, "Show this VM's report history");
    query->add_option("--limit", qLimit, "History rows")->capture_default_str();
    query->add_flag("--json", qJson, "JSON output");

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        int rc = app.exit(e);
        return rc == 0 ? 0 : 2;
    }

    if (query->parsed())
        return runQuery(qStateDir.empty() ? defaultStateDir() : qStateDir, qVm, qLimit, qJson);

    setupLogging("daxprobe-collector");
    if (!config.empty()) {
        // Command-line flags win over the file: load the file first, then re-apply them.
        CollectorOptions fromFile;
        if (auto r = loadConfigFile(config, fromFile); !r) {
            spdlog::error("{}", r.error().describe());
            return 2;
        }
        if (o.stateDir.empty())
            o.stateDir = fromFile.stateDir;
        if (!run->get_option("--metrics-listen")->count())
            o.metricsListen = fromFile.metricsListen;
        if (!run->get_option("--watch-name")->count())
            o.watchName = fromFile.watchName;
        if (!run->get_option("--max-rows")->count())
            o.maxRowsPerVm = fromFile.maxRowsPerVm;
        if (!run->get_option("--max-bytes")->count())
            o.maxBytesPerVm = fromFile.maxBytesPerVm;
        o.sockets = fromFile.sockets;
        o.watchDirs.insert(o.watchDirs.end(), fromFile.watchDirs.begin(), fromFile.watchDirs.end());
    }
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
