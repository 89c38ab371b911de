#include "probes/readers/boot_memory.h"

#include <cstdlib>

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

void noteBootMemory(BounceBufferFacts &f, std::string_view m)
{
    std::uint64_t a = 0, b = 0;
    if (m.starts_with("software IO TLB: mapped ")) {
        auto open = m.rfind('(');
        if (open != std::string_view::npos) {
            f.mapped = true;
            f.mappedLine = std::string(m);
            f.bytes = std::strtoull(std::string(m.substr(open + 1)).c_str(), nullptr, 10) << 20;
        }
    } else if (m.starts_with("BIOS-e820: ") && m.ends_with(" usable")) {
        if (memRange(m, a, b) && b >= k4G)
            f.ramAbove4G = true;
    } else if (m.starts_with("ACPI: SRAT: ") && m.ends_with(" hotplug")) {
        if (memRange(m, a, b) && b >= k4G && f.hotplugLine.empty())
            f.hotplugLine = std::string(m);
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

} // namespace daxprobe
