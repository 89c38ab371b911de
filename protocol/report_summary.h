#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace daxprobe::protocol
{

class JsonSpans; // json_text.h

// What the agent's fingerprint, the collector's codes and the ledger read
// of a daxprobe.check/1 report, read once from its JSON text. The text may
// come from a guest: anything absent or of the wrong type reads as "unknown"
// (a code) or empty/nullopt (the rest); a repeated key counts with its last
// value, as in a DOM. Codes are sanitized like an identifier (64
// characters); names are decoded but left as sent (print them escaped).
struct ReportSummary {
    struct Mount {
        std::string key; // mount_point
        std::string code = "unknown";
        std::string blockdev; // "pmem0"
        // badblocks.files, counted: files with bad sectors; nullopt when the
        // mount has no "badblocks" object (no bad sectors there, or an older agent)
        std::optional<std::uint64_t> damagedFiles;
        bool operator==(const Mount &) const = default;
    };
    struct Namespace {
        std::string dev;      // "namespace0.0"
        std::string blockdev; // what a mount's blockdev names
        std::optional<std::uint64_t> size;
        std::string code = "unknown";
        std::optional<std::uint64_t> badblocks; // badblock_count: bad 512-byte sectors
        bool operator==(const Namespace &) const = default;
    };
    struct Dimm {
        std::string dev; // "nmem0"
        std::optional<std::uint64_t> dirtyShutdown;
        std::string code = "unknown";
        // health: its SMART health_state (as the guest wrote it, bounded)
        // and live shutdown_count, where the DIMM gave them.
        std::string healthState;
        std::optional<std::uint64_t> shutdownCount;
        bool operator==(const Dimm &) const = default;
    };
    std::string code = "unknown"; // verdict.code
    std::vector<Mount> mounts;    // one per element of "mounts", in order
    std::vector<Namespace> namespaces;
    std::vector<Dimm> dimms;
    std::optional<std::uint64_t> pageCacheBytes; // meminfo.Cached
    bool operator==(const ReportSummary &) const = default;
};

// `spans`, if given, are validateJson's of the text `reportText` views.
ReportSummary summarizeReport(std::string_view reportText, const JsonSpans *spans = nullptr);

} // namespace daxprobe::protocol
