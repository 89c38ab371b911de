#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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

    bool hasFlag(const std::string &flag) const;
};

// The nmem devices `nmems` of the bus at `busPath` (sys/bus/nd/devices/ndbusN),
// with which of its `regions` each one backs; both lists in id order.
std::vector<NdDimm> readDimms(const Root &root, const std::string &busPath, const std::string &bus,
                              const std::vector<std::string> &regions,
                              const std::vector<std::string> &nmems);

} // namespace daxprobe
