#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "collector/vm_metrics.h"
#include "protocol/schema.h"

namespace daxprobe::collector
{

// Shared between the collector loop (writer) and the HTTP thread (reader).
class MetricsRegistry
{
  public:
    void update(const std::string &vm, const std::function<void(VmMetrics &)> &fn);
    void remove(const std::string &vm);
    // A report of vm failed to commit: counted per VM and in the total.
    void noteStoreError(const std::string &vm);
    // The database file was found deleted or replaced (and reopened).
    void noteStoreFileLost();
    // The write-ahead log: its size, its cap, whether a reader pins it there
    // (commits stopped), commits refused so far. True if `pinned` changed.
    bool setWal(std::int64_t bytes, std::int64_t capBytes, bool pinned, std::uint64_t refused);
    bool walPinned() const;
    // /metrics' own HTTP connections right now (the page shows its bound).
    void setHttpConnections(std::size_t active, std::size_t limit);
    std::string render() const;

    // The report's verdict, its mount verdicts (counted) and its DIMMs
    // (at most kMaxDimms, by name) into m.
    static constexpr std::size_t kMaxDimms = 64;
    static void applyReport(VmMetrics &m, const protocol::ReportSummary &report, std::int64_t now);

  private:
    void appendCollector(std::string &out) const; // under mu_
    mutable std::mutex mu_;
    std::map<std::string, VmMetrics> vms_;
    std::uint64_t storeErrors_ = 0, storeFilesLost_ = 0, walRefused_ = 0;
    std::int64_t walBytes_ = 0, walCapBytes_ = 0;
    bool walPinned_ = false;
    std::size_t httpActive_ = 0, httpLimit_ = 0;
};

} // namespace daxprobe::collector
