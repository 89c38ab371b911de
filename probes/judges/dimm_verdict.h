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
    std::vector<std::string> namespaces;   // namespaces on its regions
    std::vector<std::string> mounts;       // every mount of those namespaces
    bool writableMount = false;            // one of them is mounted read-write
    Verdict verdict;
};

// A mount, and the region under it.
struct DaxMount {
    std::string region;
    std::string mountPoint;
    bool writable = true; // not mounted read-only
};

// `report`: the DIMM, what is on its regions; `seen`: the last counts.
Verdict judgeDimm(const DimmReport &report, const ShutdownCounts &seen = {});

// Every DIMM of the topology, against the DAX mounts judged so far, the
// mounts (mount point, namespace) and the counts the agent saw last.
std::vector<DimmReport> judgeDimms(const Topology &topology, const std::vector<DaxMount> &daxMounts,
                                   const std::vector<DaxMount> &mounts = {},
                                   const ShutdownCounts &seen = {});

// A namespace on a region a DIMM made read-only cannot be reconfigured
// ("read-only, re-configuration disabled"): its remedy becomes the DIMM.
void withholdReconfiguration(const Topology &topology, const NdNamespace *ns, Verdict &v);

} // namespace daxprobe
