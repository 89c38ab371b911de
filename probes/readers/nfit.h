#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace daxprobe
{

// What the ACPI NFIT says, decoded from the raw table bytes. A malformed
// table is not an error of the check: it is evidence, kept in `problems`.
struct NfitSpaRange {
    std::uint16_t index = 0;
    std::string type; // "pmem", "volatile", or the GUID when unknown to us
    std::uint64_t base = 0;
    std::uint64_t length = 0;
};

struct NfitInfo {
    bool present = false;
    std::string readError; // why the table could not be read, if not present
    std::string signature;
    std::uint32_t length = 0; // from the header
    std::uint8_t revision = 0;
    bool checksumOk = false;
    std::string oemId;
    std::vector<NfitSpaRange> spaRanges;
    unsigned memdevCount = 0; // NVDIMM region mapping structures
    unsigned controlRegionCount = 0;
    unsigned flushHintCount = 0;
    std::optional<std::uint32_t> platformCapabilities; // type 7, bit 0 cpu cache, bit 1 mem ctrl
    std::vector<std::string> problems;

    unsigned pmemRangeCount() const;
    bool valid() const { return present && problems.empty(); }
};

NfitInfo parseNfit(std::string_view bytes);

} // namespace daxprobe
