#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "collector/metrics.h"
#include "collector/store.h"
#include "protocol/schema.h"

namespace daxprobe::collector
{

// What the collector does with the reports of one wake (each part of one
// VM, the host-side channel name): commit them all in one transaction, and
// only then count each new one in its VM's metrics and log it (debug level:
// one line per report is for following a stream, not for a fleet's log). A
// failure is logged once at error level and counted once per VM; every
// receipt is then NotStored, and the channels ack none of them (nor any later
// report of their streams).
Result<void> storeReports(Store &store, MetricsRegistry &metrics,
                          std::span<const ChannelReports> batch, std::int64_t wallNow);

// The write-ahead log's state into the metrics; logs when a reader starts
// or stops pinning it at its cap (commits stop, then resume by themselves).
void noteWal(Store &store, MetricsRegistry &metrics);

// The agent's claimed identity, kept as attributes of the host-named VM.
void noteIdentity(Store &store, const std::string &vm, const std::string &socket,
                  const protocol::AgentIdentity &id, std::int64_t wallNow);

} // namespace daxprobe::collector
