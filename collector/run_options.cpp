#include "collector/run_options.h"

#include "collector/option_ranges.h"

namespace daxprobe::collector
{

CLI::Validator inRange(std::string_view name)
{
    const NumberRange &r = numberRange(name);
    return CLI::Validator(
        [&r](std::string &text) {
            auto v = parseInRange(r, text);
            return v ? std::string() : v.error().message;
        },
        describeRange(r));
}

CLI::App *addRunCommand(CLI::App &app, RunArgs &a)
{
    CollectorOptions &o = a.options;
    auto *run =
        app.add_subcommand("run", "Connect to guest channels, store reports, serve /metrics");
    run->add_option("--socket", a.sockets, "A QEMU chardev socket: [NAME=]PATH (repeatable)");
    run->add_option("--config", a.config, "Config file (see collector/README in PROTOCOL.md)");
    run->add_option("--watch-dir", o.watchDirs,
                    "Directory of channel sockets to watch (repeatable)");
    run->add_option("--watch-name", o.watchName,
                    "Socket file name to pick up in watched dirs ('*': any)")
        ->capture_default_str();
    run->add_option("--state-dir", o.stateDir,
                    "Where collector.db lives (default $STATE_DIRECTORY or /var/lib/daxprobe)");
    run->add_option("--metrics-listen", o.metricsListen, "HOST:PORT for /metrics ('' disables)")
        ->capture_default_str();
    run->add_option("--max-rows", o.maxRowsPerVm, "Reports kept per VM")
        ->capture_default_str()
        ->check(inRange("max-rows"));
    run->add_option("--max-bytes", o.maxBytesPerVm, "Report bytes kept per VM")
        ->capture_default_str()
        ->check(inRange("max-bytes"));
    run->add_option("--max-guests", o.maxChannels, "Guests served at once (more are ignored)")
        ->capture_default_str()
        ->check(inRange("max-guests"));
    run->add_option("--guest-rate", o.messagesPerSecond,
                    "Messages per second one guest may send (burst: 10 s worth)")
        ->capture_default_str()
        ->check(inRange("guest-rate"));
    run->add_option("--guest-byte-rate", o.bytesPerSecond,
                    "Bytes per second one guest may send (burst: 4 s worth)")
        ->capture_default_str()
        ->check(inRange("guest-byte-rate"));
    run->add_option("--log-level", a.logLevel,
                    "trace, debug (also each stored report), info, warn, error, off")
        ->capture_default_str()
        ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
    return run;
}

} // namespace daxprobe::collector
