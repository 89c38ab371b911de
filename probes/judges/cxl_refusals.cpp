#include "probes/judges/cxl_refusals.h"

#include "probes/judges/verdict_types.h"
#include "probes/readers/text_util.h"

namespace daxprobe
{

namespace
{

const CxlRefusal kRefusals[] = {
    // cxl_pci, when the OS owns CXL error handling (_OSC) and the device has
    // no MSI/MSI-X for its event logs: the memdev is never registered.
    {"Failed to get interrupt for event Info log", code::CxlMemdevMissing,
     "cxl_pci could not set up the device's event interrupts (QEMU before 8.0 gives a "
     "cxl-type3 device none) and gave up on it, so no memdev exists",
     "boot the guest kernel with pcie_ports=compat (QEMU before 8.0), then: cxl list -M"},
    // Since 6.2 a region commit first invalidates the CPU caches, which x86
    // refuses under a hypervisor (the CPUID hypervisor bit) unless the kernel
    // has CONFIG_CXL_REGION_INVALIDATION_TEST.
    {"Failed to synchronize CPU cache state", code::CxlCommitFailed,
     "committing a region first invalidates the CPU caches, which this kernel refuses inside a "
     "virtual machine (the CPU says it runs under a hypervisor)",
     "start QEMU with -cpu max,hypervisor=off (or boot a kernel built with "
     "CONFIG_CXL_REGION_INVALIDATION_TEST=y), then create the region again and check it with "
     "cxl list -R"},
    // cxl_pmem needs every memdev's serial for the region's interleave-set cookie.
    {"invalid or missing serial number", code::CxlNoSerial,
     "a memdev of the region has no serial number (QEMU's default means none), which cxl_pmem "
     "needs to make the nd region",
     "give every cxl-type3 device its own serial number (-device cxl-type3,sn=0x2), restart "
     "the VM and create the region again"},
};

} // namespace

const CxlRefusal *findCxlRefusal(std::string_view message)
{
    for (const auto &r : kRefusals)
        if (message.find(r.message) != std::string_view::npos)
            return &r;
    return nullptr;
}

std::string cxlLineDevice(std::string_view message)
{
    auto words = splitFields(message);
    if (words.size() < 2 || words[1].size() < 2 || words[1].back() != ':')
        return {};
    return std::string(words[1].substr(0, words[1].size() - 1));
}

} // namespace daxprobe
