#pragma once

#include <string>

#include "probes/readers/topology.h"

namespace daxprobe
{

// virtio-pmem (QEMU -device virtio-pmem-pci, guest module virtio_pmem): a pmem
// region on its own nd bus with no NFIT behind it. Its flushes are
// asynchronous (the host fsyncs the backing file when the guest flushes), so
// the kernel refuses MAP_SYNC on it by design.
inline constexpr const char *kVirtioPmemProvider = "virtio-pmem";

const NdBus *busOf(const Topology &topo, const NdRegion &region);
bool isVirtioPmem(const Topology &topo, const NdRegion &region);

// What an application on a virtio-pmem DAX mount must do instead of relying
// on MAP_SYNC: one sentence, shared by the mount verdict and the warning.
std::string virtioPmemConsequence();

// The system-wide line about a virtio-pmem region: the NFIT is absent by
// design, flushes are asynchronous.
std::string virtioPmemNote(const Topology &topo, const NdRegion &region, bool nfitPresent);

} // namespace daxprobe
