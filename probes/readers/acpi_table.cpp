#include "probes/readers/acpi_table.h"

namespace daxprobe
{

std::string acpiAsciiField(std::string_view s)
{
    std::string out;
    for (char c : s)
        out.push_back(c >= 0x20 && c < 0x7f ? c : '?');
    while (!out.empty() && out.back() == ' ')
        out.pop_back();
    return out;
}

bool acpiChecksumOk(std::string_view bytes)
{
    unsigned char sum = 0;
    for (char c : bytes)
        sum = static_cast<unsigned char>(sum + static_cast<unsigned char>(c));
    return sum == 0;
}

} // namespace daxprobe
