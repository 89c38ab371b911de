#include "probes/judges/bounce_buffer.h"

#include <cstdlib>
#include <string_view>

#include <fmt/format.h>

#include "probes/judges/verdict.h"
#include "probes/readers/kmsg.h"

namespace daxprobe
{

namespace
{

constexpr std::uint64_t k4G = 1ULL << 32;

// "[mem 0xA-0xB]" -> (A, B); false when the text has no such range.
bool memRange(std::string_view m, std::uint64_t &a, std::uint64_t &b)
{
    auto at = m.find("[mem ");
    if (at == std::string_view::npos)
        return false;
    std::string s(m.substr(at + 5, 64));
    char *end = nullptr;
    a = std::strtoull(s.c_str(), &end, 16);
    if (!end || *end != '-')
        return false;
    b = std::strtoull(end + 1, &end, 16);
    return end && *end == ']';
}

} // namespace

void noteBootMemory(BounceBufferFacts &f, const KmsgRecord &r)
{
    std::string_view m = r.message;
    std::uint64_t a = 0, b = 0;
    if (m.starts_with("software IO TLB: mapped ")) {
        auto open = m.rfind('(');
        if (open != std::string_view::npos) {
            f.mapped = true;
            f.mappedLine = r.message;
            f.bytes = std::strtoull(std::string(m.substr(open + 1)).c_str(), nullptr, 10) << 20;
        }
    } else if (m.starts_with("BIOS-e820: ") && m.ends_with(" usable")) {
        if (memRange(m, a, b) && b >= k4G)
            f.ramAbove4G = true;
    } else if (m.starts_with("ACPI: SRAT: ") && m.ends_with(" hotplug")) {
        if (memRange(m, a, b) && b >= k4G && f.hotplugLine.empty())
            f.hotplugLine = r.message;
    } else if (m.starts_with("Command line: ")) {
        for (std::string_view opt : {"swiotlb=", "mem_encrypt=on", "iommu=soft"}) {
            auto at = m.find(opt);
            if (at != std::string_view::npos && (at == 0 || m[at - 1] == ' ')) {
                auto end = m.find(' ', at);
                f.cmdlineOption = std::string(m.substr(at, end == m.npos ? m.npos : end - at));
            }
        }
    }
}

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
