#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "collector/host_facts.h"
#include "collector/ledger.h"

namespace daxprobe::collector
{

// The bad-block figures of a VM's last report (badblock_metrics.cpp).
struct VmBadblocks {
    std::map<std::string, std::uint64_t> byNamespace; // bad 512-byte sectors, by namespace
    std::uint64_t damagedFiles = 0;                   // files with bad sectors, all mounts
};

// What /metrics shows about one VM (Prometheus naming: daxprobe_ prefix,
// base units, _total for counters).
struct VmMetrics {
    bool connected = false;
    std::uint64_t connects = 0, bytes = 0, messages = 0, reports = 0, stored = 0, duplicates = 0,
                  invalid = 0, throttled = 0, agentDropped = 0, storeErrors = 0, deferred = 0;
    bool storeHeld = false; // acks withheld after a store error, until a resend is stored
    std::map<std::string, std::uint64_t> disconnects; // by reason
    std::string verdict;                              // last report's top-level code
    std::map<std::string, std::uint64_t> mounts;      // mount verdict code -> count
    struct Dimm {
        std::string code; // one of protocol::kDimmCodes
        std::optional<std::uint64_t> dirtyShutdown;
        std::string health;                         // one of protocol::kDimmHealthStates, or none
        std::optional<std::uint64_t> shutdownCount; // live (SMART)
    };
    std::map<std::string, Dimm> dimms; // by nmem name, at most kMaxDimms
    std::int64_t lastReportAt = 0;
    std::optional<QemuFacts> qemu;
    // The agent's own count (dropped_reports) is per stream and the guest's
    // to say: agentDropped only grows, by what the count grew within a
    // stream, and by the whole count of a new stream (an agent restart).
    void noteAgentDropped(const std::string &stream, std::uint64_t count);
    std::string droppedStream;
    std::uint64_t droppedSeen = 0;
    GuestMemory guest; // from the last report, for the memory ledger
    VmBadblocks badblocks;
};

// A VM's name (or a path) as a label value of the /metrics page.
std::string escapeLabel(std::string_view v);

} // namespace daxprobe::collector
