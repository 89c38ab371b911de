#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "schema.h"
#include "sqlite_db.h"

namespace daxprobe::collector
{

struct StoredReport {
    std::string vm, stream, verdict, reason;
    std::uint64_t seq = 0;
    std::int64_t receivedAt = 0; // unix seconds
    nlohmann::json report, metrics;
};

struct VmState {
    std::string vm, socket, machineId, hostname, agentVersion;
    std::string stream, verdict;
    std::uint64_t seq = 0, droppedReports = 0;
    std::int64_t lastReportAt = 0, lastSeenAt = 0;
    std::uint64_t reportCount = 0;
    nlohmann::json hostFacts; // null until the QEMU process was found
};

struct StoreOptions {
    std::size_t maxRowsPerVm = 10000;     // oldest reports beyond this are deleted
    std::size_t maxBytesPerVm = 64 << 20; // and beyond this much report text
    // How long a write waits for another process's lock (a backup, the
    // sqlite3 shell) before failing. Short: the collector's one thread serves
    // every guest, and a failed report is retried later, not waited for.
    int busyTimeoutMs = 50;
};

// Every report and the latest state per VM, in SQLite with WAL so `query`
// reads while the collector writes. The VM key is the host-side channel name,
// never anything the guest claims.
class Store
{
  public:
    static Result<Store> open(const std::string &path, StoreOptions options = {});
    static Result<Store> openReadOnly(const std::string &path);

    // Commits the report (and the VM's latest state) in one transaction.
    // Returns false for a (vm, stream, seq) already stored: a resend.
    Result<bool> addReport(const std::string &vm, const protocol::ReportEnvelope &report,
                           std::int64_t now);
    Result<void> noteVm(const std::string &vm, const std::string &socket,
                        const protocol::AgentIdentity &identity, std::int64_t now);
    Result<void> setHostFacts(const std::string &vm, const nlohmann::json &facts);

    Result<std::vector<VmState>> latest();
    Result<std::vector<StoredReport>> history(const std::string &vm, std::size_t limit);
    Result<std::uint64_t> reportCount(const std::string &vm);

  private:
    Store(SqliteDb db, StoreOptions options) : db_(std::move(db)), options_(options) {}
    Result<void> migrate();

    SqliteDb db_;
    StoreOptions options_;
};

// report.verdict.code, bounded and printable; "unknown" when absent.
std::string verdictCode(const nlohmann::json &report);

} // namespace daxprobe::collector
