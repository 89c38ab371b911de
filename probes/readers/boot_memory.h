#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace daxprobe
{

// What the boot log says about the SWIOTLB bounce buffer and why the kernel
// set it up. x86 enables SWIOTLB when the highest *possible* page frame is
// above 4 GiB (pci_swiotlb_detect: max_possible_pfn > MAX_DMA32_PFN), and
// the SRAT's hotplug ranges count as possible: QEMU's `maxmem` device memory
// region, where NVDIMMs and virtio-pmem live, starts at 4 GiB. So a guest
// whose RAM is all below 4 GiB still sets aside 64 MiB of it as a bounce
// buffer that only a device limited to 32-bit DMA would ever use.
struct BounceBufferFacts {
    bool mapped = false;
    std::uint64_t bytes = 0; // "software IO TLB: mapped [mem ...] (64MB)"
    std::string mappedLine;
    bool ramAbove4G = false;   // an e820 "usable" range ending above 4 GiB
    std::string hotplugLine;   // an SRAT hotplug range above 4 GiB, if any
    std::string cmdlineOption; // swiotlb=... or mem_encrypt=on/iommu=... on the command line
};

// Folds one boot-log message into the facts (kmsg.cpp calls it for every
// record, kept or not: these lines are logged once, at boot).
void noteBootMemory(BounceBufferFacts &facts, std::string_view message);

} // namespace daxprobe
