#pragma once

#include <map>
#include <string>

#include "collector/ledger.h"
#include "collector/vm_metrics.h"

namespace daxprobe::collector
{

// The VM's ledger from what /metrics holds of it.
LedgerVm ledgerVmOf(const std::string &vm, const VmMetrics &m);

// The ledger's families, per VM and for this host (files shared by several
// VMs once), appended to a /metrics page.
void appendLedgerMetrics(std::string &out, const std::map<std::string, VmMetrics> &vms);

} // namespace daxprobe::collector
