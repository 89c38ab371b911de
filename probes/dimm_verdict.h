#pragma once

#include <string>
#include <vector>

#include "probes/dimm.h"
#include "probes/verdict.h"

namespace daxprobe
{

// What a DIMM's state means for the regions it backs and for the DAX
// filesystems mounted on them (issue 36); DimmReport is in verdict.h.

// `daxMounts`: the mount points with DAX in effect on its regions.
Verdict judgeDimm(const NdDimm &dimm, const std::vector<std::string> &daxMounts);

// Every DIMM of the topology, against the mounts judged so far.
std::vector<DimmReport> judgeDimms(const Topology &topology,
                                   const std::vector<MountReport> &mounts);

// A namespace on a region a DIMM made read-only cannot be reconfigured
// ("read-only, re-configuration disabled"): its remedy becomes the DIMM.
void withholdReconfiguration(const Topology &topology, const NdNamespace *ns, Verdict &v);

} // namespace daxprobe
