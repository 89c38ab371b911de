#include "probes/judges/bounce_buffer.h"

#include <fmt/format.h>

#include "probes/judges/verdict_types.h"

namespace daxprobe
{

std::optional<Verdict> judgeBounceBuffer(const BounceBufferFacts &f)
{
    if (!f.mapped || f.ramAbove4G || f.hotplugLine.empty() || !f.cmdlineOption.empty())
        return std::nullopt;
    Verdict v;
    v.code = code::BounceBufferForHotplug;
    v.severity = Severity::Warning;
    v.summary = fmt::format(
        "the kernel set aside a {} MiB SWIOTLB bounce buffer only because the memory hotplug "
        "range (QEMU's maxmem, where NVDIMMs and virtio-pmem live) reaches above 4 GiB; all RAM "
        "is below 4 GiB, so no DMA from RAM needs bouncing",
        f.bytes >> 20);
    v.evidence.push_back({"kmsg", f.mappedLine});
    v.evidence.push_back({"kmsg", f.hotplugLine});
    v.evidence.push_back({"e820", "no usable RAM above 4 GiB"});
    v.remedy = "boot the guest with swiotlb=noforce: safe when every DMA device can reach "
               "64-bit addresses or bypasses the DMA API (virtio without iommu_platform, "
               "NVMe, virtio-scsi, e1000e) and the guest is not a confidential VM (SEV/TDX "
               "need the buffer); keep it when a 32-bit-only device (ata_piix IDE, UHCI "
               "USB) may do I/O to pmem pages (O_DIRECT from a DAX mapping). A smaller "
               "maxmem does not help: the device memory region starts at 4 GiB whatever its "
               "size";
    return v;
}

} // namespace daxprobe
