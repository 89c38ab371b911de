#pragma once

#include "base/root.h"
#include "probes/readers/facts.h"

namespace daxprobe
{

// Reads the files under the root that the verdicts need (NFIT, CEDT and
// /sys/bus/cxl, mountinfo,
// block devices, meminfo, vmstat, kmsg, tracefs). Used by live runs and by
// replay of a capture; expects facts.topology filled first, since it names
// the pmem block devices.
void readRootFacts(const Root &root, Facts &facts, KmsgReader *kmsg = nullptr,
                   FaultProbeCache *faultProbes = nullptr);

// Mounts daxprobe examines: those on a pmem block device, those with a
// dax option whatever their device, and virtio-fs (where shared files live
// when they are not on pmem).
bool isDaxCandidate(const Facts &facts, const MountEntry &mount);

} // namespace daxprobe
