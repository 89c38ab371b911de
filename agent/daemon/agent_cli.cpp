#include "agent/daemon/agent_cli.h"

#include <memory>

#include <spdlog/spdlog.h>

#include "agent/check/check_runner.h"
#include "agent/daemon/agent_metrics.h"
#include "agent/daemon/daemon_port.h"
#include "agent/walk_options.h"
#include "base/logging.h"
#include "probes/readers/fault_sources.h"
#include "probes/readers/kmsg.h"

#ifndef DAXPROBE_VERSION
#define DAXPROBE_VERSION "unknown"
#endif

namespace daxprobe
{

Subcommand addAgentCommand(CLI::App &app)
{
    auto options = std::make_shared<DaemonOptions>();
    DaemonOptions &o = *options;
    auto *cmd = app.add_subcommand(
        "agent", "Report to the host over virtio-serial (or a unix socket) until stopped");
    cmd->add_option("--port", o.portName, "virtio-serial port name")->capture_default_str();
    cmd->add_option("--device", o.portPath, "Port device path (skips the lookup by name)");
    cmd->add_option("--listen", o.listenPath, "Serve this unix socket instead of a virtio port");
    cmd->add_option("--interval", o.intervalSeconds, "Seconds between periodic reports")
        ->capture_default_str()
        ->check(CLI::Range(1u, 86400u));
    cmd->add_option("--recheck", o.recheckSeconds,
                    "Seconds between checks that report only a changed verdict (0: off)")
        ->capture_default_str();
    cmd->add_option("--max-pending", o.maxPending, "Unacknowledged reports kept for resending")
        ->capture_default_str()
        ->check(CLI::Range(std::size_t{1}, std::size_t{10000}));
    cmd->add_flag_callback(
        "--no-active", [&o] { o.activeChecks = false; },
        "Skip the MAP_SYNC test file on DAX mounts in every check");
    addWalkOptions(*cmd, o.walk);
    cmd->add_option("--state-dir", o.stateDir,
                    "Remember each DIMM's unsafe-shutdown count in DIR (the unit's "
                    "StateDirectory); a rise is a problem");
    cmd->add_option("--root", o.root, "Look up /dev, /sys, /etc under this directory")
        ->capture_default_str();
    cmd->get_option("--listen")->excludes(cmd->get_option("--device"));
    return {cmd, [options] { return runAgent(*options); }};
}

int runAgent(const DaemonOptions &options)
{
    // Logs go to the journal under systemd, else stderr; never to the port.
    setupLogging("daxprobe-agent");
    auto root = Root::open(options.root);
    if (!root) {
        spdlog::error("{}", root.error().describe());
        return 2;
    }
    AgentHooks hooks;
    // One kernel log reader for the daemon's life: each check reads only the
    // records logged since the last one.
    // The same for the perf and tracepoint probes' answers.
    auto kmsg = std::make_shared<KmsgReader>();
    auto faultProbes = std::make_shared<FaultProbeCache>();
    hooks.check = [root = options.root, stateDir = options.stateDir, active = options.activeChecks,
                   walk = options.walk, kmsg, faultProbes] {
        CheckOptions co;
        co.root = root;
        co.stateDir = stateDir;
        co.activeChecks = active;
        co.walk = walk;
        co.json = true;
        co.kmsg = kmsg.get();
        co.faultProbes = faultProbes.get();
        return runCheck(co).report;
    };
    hooks.metrics = [root = options.root] { return collectMetrics(root); };
    auto daemon =
        AgentDaemon::create(options, readIdentity(*root, DAXPROBE_VERSION), std::move(hooks));
    if (!daemon) {
        spdlog::error("{}", daemon.error().describe());
        return 2;
    }
    return (*daemon)->run();
}

} // namespace daxprobe
