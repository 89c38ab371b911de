#include "collector/badblock_metrics.h"

#include <fmt/format.h>

namespace daxprobe::collector
{

namespace
{

// "namespace" DIGITS "." DIGITS, as the kernel names them (ndctl's dev).
bool kernelNamespaceName(const std::string &s)
{
    constexpr std::string_view prefix = "namespace";
    if (s.size() > 40 || s.rfind(prefix, 0) != 0)
        return false;
    std::size_t dot = s.find('.', prefix.size());
    auto digits = [&](std::size_t b, std::size_t e) {
        if (b >= e)
            return false;
        for (std::size_t i = b; i < e; ++i)
            if (s[i] < '0' || s[i] > '9')
                return false;
        return true;
    };
    return dot != std::string::npos && digits(prefix.size(), dot) && digits(dot + 1, s.size());
}

} // namespace

VmBadblocks badblocksOf(const protocol::ReportSummary &report)
{
    VmBadblocks b;
    for (const auto &ns : report.namespaces)
        if (ns.badblocks && kernelNamespaceName(ns.dev) &&
            b.byNamespace.size() < kMaxBadblockNamespaces)
            b.byNamespace[ns.dev] = *ns.badblocks;
    for (const auto &m : report.mounts)
        if (m.damagedFiles) // bounded by the report's size: at most one per byte
            b.damagedFiles += *m.damagedFiles;
    return b;
}

void appendBadblockMetrics(std::string &out, const std::map<std::string, VmMetrics> &vms)
{
    out += "# HELP daxprobe_vm_badblocks Bad 512-byte sectors of each namespace in the VM's last "
           "report (reads there fail)\n# TYPE daxprobe_vm_badblocks gauge\n";
    for (const auto &[vm, m] : vms)
        for (const auto &[ns, n] : m.badblocks.byNamespace)
            out += fmt::format("daxprobe_vm_badblocks{{vm=\"{}\",namespace=\"{}\"}} {}\n",
                               escapeLabel(vm), ns, n);
    out += "# HELP daxprobe_vm_damaged_files Files with bad sectors in the VM's last report\n"
           "# TYPE daxprobe_vm_damaged_files gauge\n";
    for (const auto &[vm, m] : vms)
        if (!m.verdict.empty())
            out += fmt::format("daxprobe_vm_damaged_files{{vm=\"{}\"}} {}\n", escapeLabel(vm),
                               m.badblocks.damagedFiles);
}

} // namespace daxprobe::collector
