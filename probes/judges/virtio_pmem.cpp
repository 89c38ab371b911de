#include "probes/judges/virtio_pmem.h"

#include <fmt/format.h>

namespace daxprobe
{

const NdBus *busOf(const Topology &topo, const NdRegion &region)
{
    for (const auto &b : topo.buses)
        if (b.dev == region.bus)
            return &b;
    return nullptr;
}

bool isVirtioPmem(const Topology &topo, const NdRegion &region)
{
    // The bus provider names the driver that registered the region; the
    // region's persistence domain (none, "unknown" to ndctl) agrees with it
    // but on its own would also fit an NVDIMM without ADR.
    const NdBus *b = busOf(topo, region);
    return b && b->provider == kVirtioPmemProvider;
}

std::string virtioPmemConsequence()
{
    return "virtio-pmem flushes are asynchronous, so MAP_SYNC is refused by design: there is no "
           "userspace flush-on-fault, writes through a mapping are durable only after "
           "fsync/msync (the host then flushes its backing file), and libpmem's pmem_is_pmem is "
           "false, so libpmem programs take the msync path";
}

std::string virtioPmemNote(const Topology &topo, const NdRegion &r, bool nfitPresent)
{
    const NdBus *b = busOf(topo, r);
    return fmt::format("{} is virtio-pmem (bus {}, provider {}, persistence domain {}): {}; {}",
                       r.dev, b ? b->dev : "?", kVirtioPmemProvider,
                       r.persistenceDomain.empty() ? "unknown" : r.persistenceDomain,
                       nfitPresent ? "it has no NFIT entry (the NFIT describes only the NVDIMMs)"
                                   : "no ACPI NFIT, by design (virtio-pmem is not an NVDIMM)",
                       virtioPmemConsequence());
}

} // namespace daxprobe
