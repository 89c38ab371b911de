#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/evidence_state.h"
#include "base/root.h"

namespace daxprobe
{

// A region this DIMM backs (regionN/mappingK names the DIMM), and what the
// kernel made of it: a region with a DIMM that cannot persist is read-only
// ("region2 read-only, marking pmem2 read-only").
struct DimmRegion {
    std::string region;
    bool readOnly = false;
};

// The DIMM's SMART payload, as `ndctl list -H` reads it through libndctl:
// each field only where the DIMM marks it valid. Observed: the DIMM answered;
// skipped: it has no SMART command (QEMU's NVDIMM), so "not available";
// failed: the command failed (text: why); not run: not a live check.
struct DimmHealth : EvidenceOutcome {
    std::optional<std::string> healthState; // ok | non-critical | critical | fatal
    std::optional<unsigned> lifeUsedPercent;
    std::optional<double> mediaTemperature; // degrees Celsius
    std::optional<double> controllerTemperature;
    std::optional<bool> shutdownDirty; // shutdown_state: dirty (true) or clean
    // The live count of unsafe shutdowns (nfit/dirty_shutdown is only the
    // count at registration).
    std::optional<std::uint64_t> shutdownCount;
};

// One nmem device as the kernel's NFIT driver describes it in sysfs
// (nmemN/nfit/): ndctl list -D's flags and dirty_shutdown. The health
// payload (ndctl list -H) is a DSM call, not a sysfs attribute.
struct NdDimm {
    std::string dev; // nmem0
    std::string bus; // ndbus0
    std::string id;  // nfit/id: vendor-manufacturing location-date-serial
    std::optional<std::uint32_t> handle;
    // nfit/flags, as the kernel names them: save_fail, restore_fail,
    // flush_fail, not_armed, smart_event (it observed a health event),
    // map_fail, smart_notify (it can notify of health events).
    std::vector<std::string> flags;
    // nfit/dirty_shutdown: the DIMM's count of unsafe shutdowns, read by the
    // driver when the DIMM was registered (absent: the DIMM does not say).
    std::optional<std::uint64_t> dirtyShutdown;
    std::vector<DimmRegion> regions;
    DimmHealth health;

    bool hasFlag(const std::string &flag) const;
};

// A DIMM's name across boots: its NFIT id (nmemN may change), else its dev.
std::string dimmKey(const NdDimm &dimm);

// The unsafe-shutdown count the agent saw last, per DIMM (dimmKey).
using ShutdownCounts = std::map<std::string, std::uint64_t>;

// The nmem devices `nmems` of the bus at `busPath` (sys/bus/nd/devices/ndbusN),
// with which of its `regions` each one backs; both lists in id order.
std::vector<NdDimm> readDimms(const Root &root, const std::string &busPath, const std::string &bus,
                              const std::vector<std::string> &regions,
                              const std::vector<std::string> &nmems);

} // namespace daxprobe
