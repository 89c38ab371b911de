#include "probes/readers/acpi_table.h"

#include <algorithm>

#include <fmt/format.h>

namespace daxprobe
{

namespace
{

// Every byte of the table, checksum included, adds up to zero.
bool acpiChecksumOk(std::string_view bytes)
{
    unsigned char sum = 0;
    for (char c : bytes)
        sum = static_cast<unsigned char>(sum + static_cast<unsigned char>(c));
    return sum == 0;
}

} // namespace

std::string acpiAsciiField(std::string_view s)
{
    std::string out;
    for (char c : s)
        out.push_back(c >= 0x20 && c < 0x7f ? c : '?');
    while (!out.empty() && out.back() == ' ')
        out.pop_back();
    return out;
}

AcpiHeader checkAcpiHeader(std::string_view bytes, std::string_view expected,
                           std::vector<std::string> &problems)
{
    AcpiHeader h;
    h.signature = acpiAsciiField(bytes.substr(0, 4));
    h.length = loadLe<std::uint32_t>(bytes, 4);
    if (h.signature != expected)
        problems.push_back(fmt::format("signature is '{}', not {}", h.signature, expected));
    if (h.length != bytes.size())
        problems.push_back(
            fmt::format("header length {} but {} bytes read", h.length, bytes.size()));
    h.checksumOk = acpiChecksumOk(bytes);
    if (!h.checksumOk)
        problems.push_back("checksum does not add up to zero");
    h.walkEnd = std::min<std::size_t>(h.length, bytes.size());
    return h;
}

} // namespace daxprobe
