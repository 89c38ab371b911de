#pragma once

#include <cstdint>
#include <string>

#include "metrics.h"
#include "schema.h"
#include "store.h"

namespace daxprobe::collector
{

// What the collector does with one report of VM `vm` (the VM key is the
// host-side channel name): commit it, and only then count it in the VM's
// metrics and log it. A failure is logged at error level and counted; the
// caller must not acknowledge the report (nor any later one of its stream).
// Returns true if new, false if it was already stored (a resend).
Result<bool> storeReport(Store &store, MetricsRegistry &metrics, const std::string &vm,
                         const protocol::ReportEnvelope &report, std::int64_t wallNow);

// The agent's claimed identity, kept as attributes of the host-named VM.
void noteIdentity(Store &store, const std::string &vm, const std::string &socket,
                  const protocol::AgentIdentity &id, std::int64_t wallNow);

} // namespace daxprobe::collector
