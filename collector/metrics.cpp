#include "collector/metrics.h"

#include <fmt/format.h>

#include "base/text_escape.h"
#include "base/version.h"
#include "collector/badblock_metrics.h"
#include "collector/ledger_metrics.h"
#include "collector/store.h"
#include "protocol/verdicts.h"

namespace daxprobe::collector
{

void MetricsRegistry::update(const std::string &vm, const std::function<void(VmMetrics &)> &fn)
{
    std::lock_guard lock(mu_);
    fn(vms_[vm]);
}

void MetricsRegistry::remove(const std::string &vm)
{
    std::lock_guard lock(mu_);
    vms_.erase(vm);
}

void MetricsRegistry::noteStoreError(const std::string &vm)
{
    std::lock_guard lock(mu_);
    ++storeErrors_;
    ++vms_[vm].storeErrors;
}

bool MetricsRegistry::setWal(std::int64_t bytes, std::int64_t capBytes, bool pinned,
                             std::uint64_t refused)
{
    std::lock_guard lock(mu_);
    bool changed = pinned != walPinned_;
    walBytes_ = bytes;
    walCapBytes_ = capBytes;
    walPinned_ = pinned;
    walRefused_ = refused;
    return changed;
}

bool MetricsRegistry::walPinned() const
{
    std::lock_guard lock(mu_);
    return walPinned_;
}

void MetricsRegistry::noteStoreFileLost()
{
    std::lock_guard lock(mu_);
    ++storeFilesLost_;
}

void MetricsRegistry::setHttpConnections(std::size_t active, std::size_t limit)
{
    std::lock_guard lock(mu_);
    httpActive_ = active;
    httpLimit_ = limit;
}

void MetricsRegistry::applyReport(VmMetrics &m, const protocol::ReportSummary &report,
                                  std::int64_t now)
{
    m.verdict = report.code;
    m.lastReportAt = now;
    m.mounts.clear();
    for (const auto &mount : report.mounts) {
        // Only the documented codes: a guest must not mint label values at will.
        for (const char *known : protocol::kMountCodes)
            if (mount.code == known)
                ++m.mounts[mount.code];
    }
    m.dimms.clear();
    for (const auto &d : report.dimms) {
        // The DIMM's name becomes a label: a bounded number of them.
        if (m.dimms.size() >= kMaxDimms || d.dev.empty())
            break;
        std::string health; // an unknown state is dropped, not a new label value
        for (const char *known : protocol::kDimmHealthStates)
            if (d.healthState == known)
                health = known;
        for (const char *known : protocol::kDimmCodes)
            if (d.code == known)
                m.dimms[d.dev] = {d.code, d.dirtyShutdown, health, d.shutdownCount};
    }
    m.badblocks = badblocksOf(report);
}

namespace
{

using Vms = std::map<std::string, VmMetrics>;

void family(std::string &out, const char *name, const char *type, const char *help)
{
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

template <class Fn> void eachVm(const Vms &vms, Fn fn)
{
    for (const auto &[vm, m] : vms)
        fn(escapeLabel(vm), m);
}

// What the VM's last report said.
void appendVerdicts(std::string &out, const Vms &vms)
{
    family(out, "daxprobe_vm_connected", "gauge",
           "1 while the collector is connected to the VM's channel");
    eachVm(vms, [&](const std::string &vm, const VmMetrics &m) {
        out += fmt::format("daxprobe_vm_connected{{vm=\"{}\"}} {}\n", vm, m.connected ? 1 : 0);
    });
    family(out, "daxprobe_vm_verdict", "gauge", "1 for the VM's current top-level verdict code");
    eachVm(vms, [&](const std::string &vm, const VmMetrics &m) {
        if (m.verdict.empty())
            return;
        for (const char *v : protocol::kOverallCodes)
            out += fmt::format("daxprobe_vm_verdict{{vm=\"{}\",verdict=\"{}\"}} {}\n", vm, v,
                               m.verdict == v ? 1 : 0);
    });
    family(out, "daxprobe_vm_mounts", "gauge", "Mounts in the VM's last report, by verdict code");
    eachVm(vms, [&](const std::string &vm, const VmMetrics &m) {
        if (m.verdict.empty())
            return;
        for (const char *v : protocol::kMountCodes) {
            auto it = m.mounts.find(v);
            out += fmt::format("daxprobe_vm_mounts{{vm=\"{}\",verdict=\"{}\"}} {}\n", vm, v,
                               it == m.mounts.end() ? 0 : it->second);
        }
    });
    family(out, "daxprobe_vm_last_report_timestamp_seconds", "gauge",
           "When the last report was stored");
    eachVm(vms, [&](const std::string &vm, const VmMetrics &m) {
        if (m.lastReportAt)
            out += fmt::format("daxprobe_vm_last_report_timestamp_seconds{{vm=\"{}\"}} {}\n", vm,
                               m.lastReportAt);
    });
}

// Each DIMM's SMART health (ndctl's states) and live unsafe-shutdown count,
// where the DIMM gives them.
void appendDimmHealth(std::string &out, const Vms &vms)
{
    family(out, "daxprobe_vm_dimm_health", "gauge",
           "1 for each DIMM's current SMART health state, 0 for the others");
    eachVm(vms, [&](const std::string &vm, const VmMetrics &m) {
        for (const auto &[dev, d] : m.dimms)
            if (!d.health.empty())
                for (const char *s : protocol::kDimmHealthStates)
                    out += fmt::format(
                        "daxprobe_vm_dimm_health{{vm=\"{}\",dimm=\"{}\",state=\"{}\"}} {}\n", vm,
                        escapeLabel(dev), s, d.health == s ? 1 : 0);
    });
    family(out, "daxprobe_vm_dimm_shutdown_count", "gauge",
           "The DIMM's live unsafe-shutdown count (its SMART shutdown_count)");
    eachVm(vms, [&](const std::string &vm, const VmMetrics &m) {
        for (const auto &[dev, d] : m.dimms)
            if (d.shutdownCount)
                out += fmt::format("daxprobe_vm_dimm_shutdown_count{{vm=\"{}\",dimm=\"{}\"}} {}\n",
                                   vm, escapeLabel(dev), *d.shutdownCount);
    });
}

// The DIMMs of the VM's last report (issue 36): the verdict of each, and
// its unsafe-shutdown count where the DIMM gives one.
void appendDimms(std::string &out, const Vms &vms)
{
    family(out, "daxprobe_vm_dimm_verdict", "gauge",
           "1 for each DIMM's current verdict code (its NFIT flags), 0 for the others");
    eachVm(vms, [&](const std::string &vm, const VmMetrics &m) {
        for (const auto &[dev, d] : m.dimms)
            for (const char *v : protocol::kDimmCodes)
                out +=
                    fmt::format("daxprobe_vm_dimm_verdict{{vm=\"{}\",dimm=\"{}\",verdict=\"{}\"}} "
                                "{}\n",
                                vm, escapeLabel(dev), v, d.code == v ? 1 : 0);
    });
    family(out, "daxprobe_vm_dimm_dirty_shutdowns", "gauge",
           "The DIMM's unsafe-shutdown count when the guest registered it (nfit/dirty_shutdown)");
    eachVm(vms, [&](const std::string &vm, const VmMetrics &m) {
        for (const auto &[dev, d] : m.dimms)
            if (d.dirtyShutdown)
                out += fmt::format("daxprobe_vm_dimm_dirty_shutdowns{{vm=\"{}\",dimm=\"{}\"}} {}\n",
                                   vm, escapeLabel(dev), *d.dirtyShutdown);
    });
    appendDimmHealth(out, vms);
}

// What the collector counted of the VM's channel.
void appendChannelCounters(std::string &out, const Vms &vms)
{
    struct Counter {
        const char *name, *help;
        std::uint64_t VmMetrics::*field;
    };
    static const Counter kCounters[] = {
        {"daxprobe_collector_connects_total", "Connections made to the VM's channel",
         &VmMetrics::connects},
        {"daxprobe_collector_received_bytes_total", "Bytes read from the VM", &VmMetrics::bytes},
        {"daxprobe_collector_messages_total", "Lines read from the VM", &VmMetrics::messages},
        {"daxprobe_collector_reports_total", "Report events read from the VM", &VmMetrics::reports},
        {"daxprobe_collector_reports_stored_total", "Reports committed to the store",
         &VmMetrics::stored},
        {"daxprobe_collector_reports_duplicate_total", "Resent reports already stored",
         &VmMetrics::duplicates},
        {"daxprobe_collector_invalid_messages_total", "Malformed messages from the VM",
         &VmMetrics::invalid},
        {"daxprobe_collector_throttled_total", "Times reading from the VM was paused for its rate",
         &VmMetrics::throttled},
        {"daxprobe_collector_vm_store_errors_total",
         "Reports of the VM that failed to commit (not acked; the agent resends them)",
         &VmMetrics::storeErrors},
        {"daxprobe_collector_reports_deferred_total",
         "Reports passed over while acks were withheld after a store error (the agent keeps "
         "them)",
         &VmMetrics::deferred},
        {"daxprobe_agent_reports_dropped_total",
         "Reports the agent dropped from its full queue (agent's count)", &VmMetrics::agentDropped},
    };
    for (const auto &c : kCounters) {
        family(out, c.name, "counter", c.help);
        eachVm(vms, [&](const std::string &vm, const VmMetrics &m) {
            out += fmt::format("{}{{vm=\"{}\"}} {}\n", c.name, vm, m.*(c.field));
        });
    }
    family(out, "daxprobe_vm_store_held", "gauge",
           "1 while acks to the VM are withheld after a store error (until a resend is stored)");
    eachVm(vms, [&](const std::string &vm, const VmMetrics &m) {
        out += fmt::format("daxprobe_vm_store_held{{vm=\"{}\"}} {}\n", vm, m.storeHeld ? 1 : 0);
    });
    family(out, "daxprobe_collector_disconnects_total", "counter", "Disconnects, by reason");
    eachVm(vms, [&](const std::string &vm, const VmMetrics &m) {
        for (const auto &[reason, n] : m.disconnects)
            out +=
                fmt::format("daxprobe_collector_disconnects_total{{vm=\"{}\",reason=\"{}\"}} {}\n",
                            vm, escapeLabel(reason), n);
    });
}

// The VM's QEMU process and its NVDIMM backends, as the host measured them.
void appendQemu(std::string &out, const Vms &vms)
{
    family(out, "daxprobe_vm_qemu_rss_bytes", "gauge", "Resident set of the VM's QEMU process");
    eachVm(vms, [&](const std::string &vm, const VmMetrics &m) {
        if (m.qemu)
            out +=
                fmt::format("daxprobe_vm_qemu_rss_bytes{{vm=\"{}\"}} {}\n", vm, m.qemu->rssBytes);
    });
    family(out, "daxprobe_vm_qemu_pss_bytes", "gauge",
           "Proportional set size of the VM's QEMU process");
    eachVm(vms, [&](const std::string &vm, const VmMetrics &m) {
        if (m.qemu)
            out +=
                fmt::format("daxprobe_vm_qemu_pss_bytes{{vm=\"{}\"}} {}\n", vm, m.qemu->pssBytes);
    });
    family(out, "daxprobe_vm_nvdimm_backend_resident_bytes", "gauge",
           "Resident size of the NVDIMM backend file mapping in QEMU");
    eachVm(vms, [&](const std::string &vm, const VmMetrics &m) {
        if (m.qemu)
            for (const auto &b : m.qemu->backends)
                out += fmt::format("daxprobe_vm_nvdimm_backend_resident_bytes{{vm=\"{}\",backend="
                                   "\"{}\",path=\"{}\"}} {}\n",
                                   vm, escapeLabel(b.id), escapeLabel(b.memPath), b.residentBytes);
    });
    family(out, "daxprobe_vm_nvdimm_backend_persistent", "gauge",
           "1 if the NVDIMM backend can persist guest writes (shared and on pmem/DAX or pmem=on)");
    eachVm(vms, [&](const std::string &vm, const VmMetrics &m) {
        if (m.qemu)
            for (const auto &b : m.qemu->backends)
                out += fmt::format("daxprobe_vm_nvdimm_backend_persistent{{vm=\"{}\",backend=\"{}"
                                   "\",persistence=\"{}\"}} {}\n",
                                   vm, escapeLabel(b.id), b.persistence,
                                   b.persistence == "pmem" ? 1 : 0);
    });
}

} // namespace

std::string MetricsRegistry::render() const
{
    std::lock_guard lock(mu_);
    std::string out;
    appendVerdicts(out, vms_);
    appendDimms(out, vms_);
    appendChannelCounters(out, vms_);
    appendQemu(out, vms_);
    appendBadblockMetrics(out, vms_);
    appendLedgerMetrics(out, vms_);
    appendCollector(out);
    return out;
}

// The collector's own unlabelled figures: a family and its one sample.
void MetricsRegistry::appendCollector(std::string &out) const
{
    auto scalar = [&](const char *name, const char *type, const char *help, auto value) {
        family(out, name, type, help);
        out += fmt::format("{} {}\n", name, value);
    };
    scalar("daxprobe_collector_store_errors_total", "counter",
           "Reports that failed to commit (not acked)", storeErrors_);
    scalar("daxprobe_collector_store_file_lost_total", "counter",
           "Times the database was found deleted or replaced under the collector (reopened; "
           "that commit was not acked)",
           storeFilesLost_);
    scalar("daxprobe_collector_wal_bytes", "gauge",
           "Size of the store's write-ahead log file (collector.db-wal)", walBytes_);
    scalar("daxprobe_collector_wal_cap_bytes", "gauge",
           "The write-ahead log's cap: past it, commits wait until it is copied back",
           walCapBytes_);
    scalar("daxprobe_collector_wal_pinned", "gauge",
           "1 while a reader's transaction holds the write-ahead log at its cap: nothing is "
           "committed or acked until it ends",
           walPinned_ ? 1 : 0);
    scalar("daxprobe_collector_wal_pinned_commits_total", "counter",
           "Commits not attempted because a reader pinned the write-ahead log at its cap",
           walRefused_);
    scalar("daxprobe_collector_http_connections", "gauge",
           "Connections to this /metrics endpoint being served now", httpActive_);
    scalar("daxprobe_collector_http_connections_limit", "gauge",
           "At most this many /metrics connections are served at once; more wait in the backlog",
           httpLimit_);
    family(out, "daxprobe_build_info", "gauge",
           "Always 1: the collector's version and the git revision it was built from");
    out += fmt::format("daxprobe_build_info{{version=\"{}\",revision=\"{}\"}} 1\n",
                       escapeLabel(projectVersion()), escapeLabel(vcsRevision()));
}

} // namespace daxprobe::collector
