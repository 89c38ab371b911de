#pragma once

#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

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

// Every byte of the table, checksum included, adds up to zero.
bool acpiChecksumOk(std::string_view bytes);

} // namespace daxprobe
