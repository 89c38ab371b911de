#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace daxprobe
{

// What every ACPI table (NFIT, CEDT) shares: the 36-byte header, its
// little-endian fields, its fixed-width ASCII fields and its checksum.
constexpr std::size_t kAcpiHeaderSize = 36;

// A little-endian field at `off`; the caller has checked it lies inside `b`
// (ACPI is little-endian, as is every machine daxprobe runs on).
template <typename T> T loadLe(std::string_view b, std::size_t off)
{
    T v{};
    std::memcpy(&v, b.data() + off, sizeof(T));
    return v;
}

// A fixed-width ASCII field (signature, OEM id): any other byte as '?', the
// space padding dropped.
std::string acpiAsciiField(std::string_view s);

// The header's claims against the bytes read.
struct AcpiHeader {
    std::string signature;
    std::uint32_t length = 0;
    bool checksumOk = false;
    std::size_t walkEnd = 0; // the end both the header and the bytes vouch for
};

// Reads the header of `bytes` (at least kAcpiHeaderSize long) and adds one
// line to `problems` for each disagreement: a signature other than `expected`,
// a length other than the bytes read, a checksum that does not add up.
AcpiHeader checkAcpiHeader(std::string_view bytes, std::string_view expected,
                           std::vector<std::string> &problems);

} // namespace daxprobe
