#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "collector/read_around.h"
#include "protocol/report_summary.h"

namespace daxprobe::collector
{

// The fleet memory ledger: where a VM's memory lives, guest side (claimed
// by the guest's report) and host side (measured by the collector), so that
// operators see what DAX saves or costs. Guest page cache is part of QEMU's
// anonymous memory (guest RAM); a backing file's host page cache is not,
// and a file that several VMs share is counted once per host.

// From the guest's latest report (untrusted: numbers only, each at most
// 2^53, anything else counts as absent).
struct GuestMemory {
    bool reported = false;            // a report with meminfo was read
    std::uint64_t pageCacheBytes = 0; // meminfo Cached (Shmem included, as the kernel counts)
    // Size of the pmem namespaces under the guest's DAX mounts (verdict
    // dax_active or dax_per_file), each device once: what the guest reads
    // from the host's file instead of through its own page cache.
    std::uint64_t daxMountBytes = 0;
};
GuestMemory guestMemoryOf(const protocol::ReportSummary &report);

struct LedgerFile {
    std::string path, role;
    std::uint64_t dev = 0, ino = 0, sizeBytes = 0, cachedBytes = 0;
    bool measured = false; // cachestat/mincore/not_applicable gave a figure
    // A pmem backend's file (NVDIMM, virtio-pmem, CXL): what QEMU maps of it
    // (its mappings' Rss), whether QEMU advised MADV_HUGEPAGE there, and its
    // device's read_ahead_kb: what read_around.h judges the page cache by.
    bool pmemBacking = false;
    std::uint64_t mappedBytes = 0;
    bool hugepageAdvised = false;
    std::optional<std::uint64_t> readAheadKb;
    std::string readAheadPath;
};

struct LedgerVm {
    std::string vm;
    GuestMemory guest;
    bool qemuKnown = false; // the QEMU process was found
    std::uint64_t qemuAnonBytes = 0, qemuPssBytes = 0;
    std::vector<LedgerFile> files;
};

// One file of the host, however many VMs use it.
struct LedgerHostFile {
    LedgerFile file; // mappedBytes: the most any one VM maps (each QEMU maps it apart)
    std::vector<std::string> vms;
    std::optional<ReadAround> readAround; // a pmem backing file's page cache read around
};

struct Ledger {
    std::vector<LedgerVm> vms;
    std::vector<LedgerHostFile> files; // measured files, once each by (dev, ino)
    std::uint64_t guestPageCacheBytes = 0, guestDaxMountBytes = 0, qemuAnonBytes = 0,
                  filesCachedBytes = 0;
    // What the VMs cost this host: QEMU's anonymous memory plus the page
    // cache of their files, each file once.
    std::uint64_t hostBytes() const { return qemuAnonBytes + filesCachedBytes; }
};
Ledger buildLedger(std::vector<LedgerVm> vms);

// The VM's ledger from what the store holds: its host facts (the
// collector's own JSON, null when QEMU was never found) and its latest
// report's text ("" when none).
LedgerVm ledgerVmOf(std::string vm, const nlohmann::json &hostFacts, std::string_view reportText);

// `daxprobe-collector query --ledger`: per VM, then the host's totals.
std::string ledgerTable(const Ledger &ledger);
std::string ledgerJson(const Ledger &ledger);

} // namespace daxprobe::collector
