#include "metrics.h"

#include <fmt/format.h>

#include "store.h"

namespace daxprobe::collector
{

namespace
{

// Every code is always exported (0 or 1), so alerts can match on absence of 1.
constexpr const char *kVerdicts[] = {"dax_verified", "problems_found", "no_nfit",
                                     "no_pmem_namespace", "check_failed"};
constexpr const char *kMountVerdicts[] = {"dax_active", "dax_silently_off", "dax_not_requested",
                                          "device_cannot_dax"};

} // namespace

std::string escapeLabel(std::string_view v)
{
    std::string out;
    for (char c : v) {
        if (c == '\\' || c == '"')
            out.push_back('\\');
        if (c == '\n') {
            out += "\\n";
            continue;
        }
        out.push_back(c);
    }
    return out;
}

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

void MetricsRegistry::setStoreErrors(std::uint64_t n)
{
    std::lock_guard lock(mu_);
    storeErrors_ = n;
}

void MetricsRegistry::applyReport(VmMetrics &m, const nlohmann::json &report, std::int64_t now)
{
    m.verdict = verdictCode(report);
    m.lastReportAt = now;
    m.mounts.clear();
    auto it = report.find("mounts");
    if (it == report.end() || !it->is_array())
        return;
    for (const auto &mount : *it) {
        std::string code = verdictCode(mount);
        // Only the documented codes: a guest must not mint label values at will.
        for (const char *known : kMountVerdicts)
            if (code == known)
                ++m.mounts[code];
    }
}

std::string MetricsRegistry::render() const
{
    std::lock_guard lock(mu_);
    std::string out;
    auto family = [&](const char *name, const char *type, const char *help) {
        out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
    };
    auto each = [&](auto fn) {
        for (const auto &[vm, m] : vms_)
            fn(escapeLabel(vm), m);
    };

    family("daxprobe_vm_connected", "gauge",
           "1 while the collector is connected to the VM's channel");
    each([&](const std::string &vm, const VmMetrics &m) {
        out += fmt::format("daxprobe_vm_connected{{vm=\"{}\"}} {}\n", vm, m.connected ? 1 : 0);
    });
    family("daxprobe_vm_verdict", "gauge", "1 for the VM's current top-level verdict code");
    each([&](const std::string &vm, const VmMetrics &m) {
        if (m.verdict.empty())
            return;
        for (const char *v : kVerdicts)
            out += fmt::format("daxprobe_vm_verdict{{vm=\"{}\",verdict=\"{}\"}} {}\n", vm, v,
                               m.verdict == v ? 1 : 0);
    });
    family("daxprobe_vm_mounts", "gauge", "Mounts in the VM's last report, by verdict code");
    each([&](const std::string &vm, const VmMetrics &m) {
        if (m.verdict.empty())
            return;
        for (const char *v : kMountVerdicts) {
            auto it = m.mounts.find(v);
            out += fmt::format("daxprobe_vm_mounts{{vm=\"{}\",verdict=\"{}\"}} {}\n", vm, v,
                               it == m.mounts.end() ? 0 : it->second);
        }
    });
    family("daxprobe_vm_last_report_timestamp_seconds", "gauge", "When the last report was stored");
    each([&](const std::string &vm, const VmMetrics &m) {
        if (m.lastReportAt)
            out += fmt::format("daxprobe_vm_last_report_timestamp_seconds{{vm=\"{}\"}} {}\n", vm,
                               m.lastReportAt);
    });

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
        {"daxprobe_agent_reports_dropped_total",
         "Reports the agent dropped from its full queue (agent's count)", &VmMetrics::agentDropped},
    };
    for (const auto &c : kCounters) {
        family(c.name, "counter", c.help);
        each([&](const std::string &vm, const VmMetrics &m) {
            out += fmt::format("{}{{vm=\"{}\"}} {}\n", c.name, vm, m.*(c.field));
        });
    }
    family("daxprobe_collector_disconnects_total", "counter", "Disconnects, by reason");
    each([&](const std::string &vm, const VmMetrics &m) {
        for (const auto &[reason, n] : m.disconnects)
            out +=
                fmt::format("daxprobe_collector_disconnects_total{{vm=\"{}\",reason=\"{}\"}} {}\n",
                            vm, escapeLabel(reason), n);
    });

    family("daxprobe_vm_qemu_rss_bytes", "gauge", "Resident set of the VM's QEMU process");
    each([&](const std::string &vm, const VmMetrics &m) {
        if (m.qemu)
            out +=
                fmt::format("daxprobe_vm_qemu_rss_bytes{{vm=\"{}\"}} {}\n", vm, m.qemu->rssBytes);
    });
    family("daxprobe_vm_qemu_pss_bytes", "gauge", "Proportional set size of the VM's QEMU process");
    each([&](const std::string &vm, const VmMetrics &m) {
        if (m.qemu)
            out +=
                fmt::format("daxprobe_vm_qemu_pss_bytes{{vm=\"{}\"}} {}\n", vm, m.qemu->pssBytes);
    });
    family("daxprobe_vm_nvdimm_backend_resident_bytes", "gauge",
           "Resident size of the NVDIMM backend file mapping in QEMU");
    each([&](const std::string &vm, const VmMetrics &m) {
        if (m.qemu)
            for (const auto &b : m.qemu->backends)
                out += fmt::format("daxprobe_vm_nvdimm_backend_resident_bytes{{vm=\"{}\",backend="
                                   "\"{}\",path=\"{}\"}} {}\n",
                                   vm, escapeLabel(b.id), escapeLabel(b.memPath), b.residentBytes);
    });
    family("daxprobe_vm_nvdimm_backend_persistent", "gauge",
           "1 if the NVDIMM backend can persist guest writes (shared and on pmem/DAX or pmem=on)");
    each([&](const std::string &vm, const VmMetrics &m) {
        if (m.qemu)
            for (const auto &b : m.qemu->backends)
                out += fmt::format("daxprobe_vm_nvdimm_backend_persistent{{vm=\"{}\",backend=\"{}"
                                   "\",persistence=\"{}\"}} {}\n",
                                   vm, escapeLabel(b.id), b.persistence,
                                   b.persistence == "pmem" ? 1 : 0);
    });
    family("daxprobe_collector_store_errors_total", "counter",
           "Reports that failed to commit (not acked)");
    out += fmt::format("daxprobe_collector_store_errors_total {}\n", storeErrors_);
    return out;
}

} // namespace daxprobe::collector
