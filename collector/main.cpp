// daxprobe-collector: `query` runs here, in a small program that links
// SQLite and the renderers only (no HTTP, no TLS, no logger: its start is
// most of its cost). `run` execs the daemon, daxprobe-collector-run, with
// the same arguments and pid.
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "base/text_escape.h"
#include "base/version.h"
#include "collector/ledger.h"
#include "collector/query.h"
#include "collector/run_options.h"
#include "collector/store.h"

using namespace daxprobe;
using namespace daxprobe::collector;

#ifndef DAXPROBE_LIBEXECDIR
#define DAXPROBE_LIBEXECDIR "/usr/libexec/daxprobe"
#endif

namespace
{

// Next to this program (the build tree), else where it is installed.
std::string daemonPath()
{
    char self[PATH_MAX];
    ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n > 0) {
        std::string dir(self, static_cast<std::size_t>(n));
        dir.erase(dir.rfind('/') + 1);
        std::string sibling = dir + "daxprobe-collector-run";
        if (::access(sibling.c_str(), X_OK) == 0)
            return sibling;
    }
    return DAXPROBE_LIBEXECDIR "/daxprobe-collector-run";
}

int runQuery(const std::string &stateDir, const std::string &vm, std::size_t limit, bool json)
{
    auto store = Store::openReadOnly(stateDir + "/collector.db");
    if (!store) {
        fmt::print(stderr, "daxprobe-collector: {}\n", store.error().describe());
        return 2;
    }
    if (vm.empty()) {
        // Rendered as the rows come (host facts as stored text: no parse),
        // printed only when all were read: an error prints no partial list.
        std::string out;
        out.reserve(std::size_t{1} << 16);
        LatestRenderer render(json, out);
        if (auto r = store->eachLatest(false, [&](const VmState &v) { render.add(v); }); !r) {
            fmt::print(stderr, "daxprobe-collector: {}\n", r.error().describe());
            return 2;
        }
        render.finish();
        std::fwrite(out.data(), 1, out.size(), stdout);
        return 0;
    }
    auto hist = store->history(vm, limit, false); // JSON text as stored: no parse
    if (!hist) {
        fmt::print(stderr, "daxprobe-collector: {}\n", hist.error().describe());
        return 2;
    }
    if (hist->empty()) {
        fmt::print(stderr, "daxprobe-collector: no reports for VM '{}'\n", printable(vm));
        return 1;
    }
    fmt::print("{}", json ? historyJson(vm, *hist) : historyTable(vm, *hist));
    return 0;
}

// Every VM's latest host facts and latest report, summed per host.
int runLedger(const std::string &stateDir, bool json)
{
    auto store = Store::openReadOnly(stateDir + "/collector.db");
    if (!store) {
        fmt::print(stderr, "daxprobe-collector: {}\n", store.error().describe());
        return 2;
    }
    auto vms = store->latest(true);
    if (!vms) {
        fmt::print(stderr, "daxprobe-collector: {}\n", vms.error().describe());
        return 2;
    }
    std::vector<LedgerVm> rows;
    for (const auto &v : *vms) {
        auto last = store->history(v.vm, 1, false);
        if (!last) {
            fmt::print(stderr, "daxprobe-collector: {}\n", last.error().describe());
            return 2;
        }
        rows.push_back(ledgerVmOf(v.vm, v.hostFacts, last->empty() ? "" : (*last)[0].reportText));
    }
    Ledger l = buildLedger(std::move(rows));
    fmt::print("{}", json ? ledgerJson(l) : ledgerTable(l));
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    if (argc >= 2 && std::string(argv[1]) == "run") {
        std::string daemon = daemonPath();
        ::execv(daemon.c_str(), argv);
        fmt::print(stderr, "daxprobe-collector: cannot run {}: {}\n", daemon,
                   Error::errnoName(errno));
        return 2;
    }
    CLI::App app{"daxprobe-collector: gathers daxprobe guest reports on the host",
                 "daxprobe-collector"};
    app.require_subcommand(1);
    app.set_version_flag("--version", versionString());
    app.set_help_all_flag("--help-all", "Show the options of every subcommand");
    // Registered for --help-all; `run` itself never gets here (exec above).
    RunArgs unused;
    addRunCommand(app, unused);

    std::string qStateDir, qVm;
    std::size_t qLimit = 20;
    bool qJson = false;
    auto *query = app.add_subcommand("query", "Latest verdict per VM, or one VM's history");
    query->add_option("--state-dir", qStateDir, "Where collector.db lives");
    query->add_option("--vm", qVm, "Show this VM's report history");
    query->add_option("--limit", qLimit, "History rows")
        ->capture_default_str()
        ->check(inRange("limit"));
    query->add_flag("--json", qJson, "JSON output");
    bool qLedger = false;
    query
        ->add_flag("--ledger", qLedger,
                   "Memory ledger: guest page cache, DAX mounts, QEMU anonymous memory and the "
                   "backing files' host page cache (shared files once), per VM and host")
        ->excludes("--vm");

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        int rc = app.exit(e);
        return rc == 0 ? 0 : 2;
    }
    if (qLedger)
        return runLedger(qStateDir.empty() ? defaultStateDir() : qStateDir, qJson);
    return runQuery(qStateDir.empty() ? defaultStateDir() : qStateDir, qVm, qLimit, qJson);
}
