#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/evidence_state.h"
#include "probes/readers/dimm.h"

namespace daxprobe
{

// Plain facts about the nd bus, as `ndctl list -BRN` would name them. Filled
// live from sysfs (sysfs_topology.cpp) or from a capture's live.json.
struct NdBus {
    std::string dev;      // ndbus0
    std::string provider; // ACPI.NFIT
    std::string commands; // its `commands` attribute: ars_start, clear_error, ...
};

constexpr std::uint64_t kSectorSize = 512;

// A run of bad 512-byte sectors (block/badblocks.c's unit).
struct BadRange {
    std::uint64_t sector = 0;
    std::uint64_t count = 0;
    bool operator==(const BadRange &) const = default;
};

struct NdRegion {
    std::string dev; // region0
    std::string bus;
    std::string type; // pmem, blk
    std::uint64_t size = 0;
    std::uint64_t align = 0;
    std::uint64_t availableSize = 0;
    std::string persistenceDomain; // memory_controller, cpu_cache, none, unknown
    std::optional<int> numaNode;
    std::uint64_t badblockCount = 0;
};

struct NdNamespace {
    std::string dev; // namespace0.0
    std::string region;
    std::string mode;       // fsdax, devdax, sector, raw, unknown
    std::string map;        // mem, dev (fsdax/devdax only)
    std::uint64_t size = 0; // usable size, as ndctl reports it
    // The namespace's own size attribute: its whole capacity, before a pfn or
    // dax info block and (map=dev) the struct pages take their part; equal to
    // `size` without a claim. nullopt when not read (captures before it).
    std::optional<std::uint64_t> rawSize;
    std::uint64_t align = 0;
    std::uint64_t sectorSize = 0; // the BTT's (sector only)
    std::string uuid;             // the claim's (pfn, dax, btt), else its own: ndctl's
    std::string blockdev;         // pmem0 (fsdax, sector, raw)
    std::string chardev;          // dax0.0 (devdax)
    // The physical address of byte 0 of /dev/pmemX or /dev/daxX.Y: the
    // claim's resource (after its info block) or the namespace's own. Only
    // root may read it; nullopt then, and for a BTT (no direct mapping).
    std::optional<std::uint64_t> dataStart;
    std::uint64_t badblockCount = 0;
    // Its media errors in sectors from the start of its data (sector 0 of
    // /dev/pmemX, byte 0 of /dev/daxX.Y): ndctl list --media-errors' units.
    std::vector<BadRange> badRanges;
};

// A device-DAX character device as `daxctl list` shows it (dax_device.h).
struct DaxDevice {
    std::string chardev; // dax0.0
    std::string nsDev;   // the nd namespace it belongs to (namespace0.0)
    std::uint64_t size = 0;
    std::uint64_t align = 0;
    std::optional<int> targetNode;
    std::string mode;  // devdax, system-ram; empty when no driver is bound
    std::string state; // "disabled" when no driver is bound
    // system-ram only: its memory blocks and whether the online ones are movable
    std::optional<std::uint64_t> onlineMemblocks;
    std::optional<std::uint64_t> totalMemblocks;
    std::optional<bool> movable;
};

// Observed once sysfs could be read (no nd bus at all is an empty, observed
// topology); Failed with the error otherwise.
struct Topology : EvidenceOutcome {
    std::vector<NdBus> buses;
    std::vector<NdRegion> regions;
    std::vector<NdNamespace> namespaces;
    std::vector<DaxDevice> daxDevices;
    std::vector<NdDimm> dimms; // as ndctl list -D, by bus

    const NdNamespace *namespaceByBlockdev(const std::string &blockdev) const;
    const DaxDevice *daxDeviceByChardev(const std::string &chardev) const;
    const NdBus *busOf(const NdNamespace &ns) const; // through its region
};

} // namespace daxprobe
