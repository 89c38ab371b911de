#pragma once

#include <map>
#include <string>

#include "collector/vm_metrics.h"
#include "protocol/report_summary.h"

namespace daxprobe::collector
{

// A report's bad-block figures, bounded: a guest names its namespaces, so
// only names shaped like the kernel's (namespaceX.Y) and only the first
// kMaxNamespaces of them become label values.
VmBadblocks badblocksOf(const protocol::ReportSummary &report);
constexpr std::size_t kMaxBadblockNamespaces = 64;

// daxprobe_vm_badblocks{vm,namespace} and daxprobe_vm_damaged_files{vm}.
void appendBadblockMetrics(std::string &out, const std::map<std::string, VmMetrics> &vms);

} // namespace daxprobe::collector
