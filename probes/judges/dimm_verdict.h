#pragma once

#include <string>
#include <vector>

#include "probes/judges/verdict_types.h"
#include "probes/readers/topology.h"

namespace daxprobe
{

// What a DIMM's state means for the regions it backs and for the DAX
// filesystems mounted on them (issue 36).

// One nmem device: its verdict, what it means for its regions, and the DAX
// mounts on them.
struct DimmReport {
    const NdDimm *dimm = nullptr;
    std::vector<std::string> consequences; // per region: read-only, not persistent
    std::vector<std::string> daxMounts;    // DAX mounts on a region of this DIMM
    Verdict verdict;
};

// A mount with DAX in effect, and the region under it.
struct DaxMount {
    std::string region;
    std::string mountPoint;
};

// `daxMounts`: the mount points with DAX in effect on its regions.
Verdict judgeDimm(const NdDimm &dimm, const std::vector<std::string> &daxMounts);

// Every DIMM of the topology, against the DAX mounts judged so far.
std::vector<DimmReport> judgeDimms(const Topology &topology,
                                   const std::vector<DaxMount> &daxMounts);

// A namespace on a region a DIMM made read-only cannot be reconfigured
// ("read-only, re-configuration disabled"): its remedy becomes the DIMM.
void withholdReconfiguration(const Topology &topology, const NdNamespace *ns, Verdict &v);

} // namespace daxprobe
