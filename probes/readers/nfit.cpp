#include "probes/readers/nfit.h"

#include <array>
#include <cstring>

#include <fmt/format.h>

#include "probes/readers/acpi_table.h"

namespace daxprobe
{

namespace
{

constexpr std::size_t kHeaderSize = kAcpiHeaderSize;
constexpr std::size_t kNfitReserved = 4; // NFIT has 4 reserved bytes after it
constexpr std::size_t kSpaSize = 56;

// ACPI 6.x "Persistent Memory Region" and "Volatile Memory Region" GUIDs, in
// the mixed-endian byte order they have in the table.
constexpr std::array<unsigned char, 16> kPmemGuid = {
    0x79, 0xd3, 0xf0, 0x66, 0xf3, 0xb4, 0x74, 0x40, 0xac, 0x43, 0x0d, 0x33, 0x18, 0xb7, 0x8c, 0xdb};
constexpr std::array<unsigned char, 16> kVolatileGuid = {
    0x56, 0x16, 0x98, 0x7e, 0xa1, 0xaa, 0x8a, 0x4e, 0x9a, 0x27, 0x1e, 0x28, 0x0b, 0xc3, 0x1a, 0x12};

std::string guidText(const unsigned char *g)
{
    return fmt::format("{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-"
                       "{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
                       g[3], g[2], g[1], g[0], g[5], g[4], g[7], g[6], g[8], g[9], g[10], g[11],
                       g[12], g[13], g[14], g[15]);
}

// One SPA range sub-table (type 0) at `off`, `len` bytes long.
void readSpaRange(std::string_view bytes, std::size_t off, std::uint16_t len, NfitInfo &info)
{
    if (len < kSpaSize) {
        info.problems.push_back(fmt::format("SPA range at offset {} is {} bytes", off, len));
        return;
    }
    NfitSpaRange r;
    r.index = loadLe<std::uint16_t>(bytes, off + 4);
    auto *guid = reinterpret_cast<const unsigned char *>(bytes.data() + off + 16);
    if (std::memcmp(guid, kPmemGuid.data(), 16) == 0)
        r.type = "pmem";
    else if (std::memcmp(guid, kVolatileGuid.data(), 16) == 0)
        r.type = "volatile";
    else
        r.type = guidText(guid);
    r.base = loadLe<std::uint64_t>(bytes, off + 32);
    r.length = loadLe<std::uint64_t>(bytes, off + 40);
    info.spaRanges.push_back(std::move(r));
}

} // namespace

unsigned NfitInfo::pmemRangeCount() const
{
    unsigned n = 0;
    for (const auto &r : spaRanges)
        n += r.type == "pmem";
    return n;
}

NfitInfo parseNfit(std::string_view bytes)
{
    NfitInfo info;
    info.present = true;
    // The NFIT's 4 reserved bytes are part of its header: a 36-39 byte table
    // with a good checksum would otherwise pass as a valid, empty NFIT.
    if (bytes.size() < kHeaderSize + kNfitReserved) {
        info.problems.push_back(
            fmt::format("table is {} bytes, shorter than an NFIT header", bytes.size()));
        if (bytes.size() < kHeaderSize)
            return info;
    }
    AcpiHeader header = checkAcpiHeader(bytes, "NFIT", info.problems);
    info.signature = header.signature;
    info.length = header.length;
    info.checksumOk = header.checksumOk;
    info.revision = loadLe<std::uint8_t>(bytes, 8);
    info.oemId = acpiAsciiField(bytes.substr(10, 6));

    // Walk only what both the header and the bytes vouch for.
    std::size_t end = header.walkEnd;
    std::size_t off = kHeaderSize + kNfitReserved;
    while (off + 4 <= end) {
        auto type = loadLe<std::uint16_t>(bytes, off);
        auto len = loadLe<std::uint16_t>(bytes, off + 2);
        if (len < 4 || off + len > end) {
            info.problems.push_back(
                fmt::format("sub-table at offset {} has bad length {}", off, len));
            break;
        }
        switch (type) {
        case 0:
            readSpaRange(bytes, off, len, info);
            break;
        case 1:
            ++info.memdevCount;
            break;
        case 4:
            ++info.controlRegionCount;
            break;
        case 6:
            ++info.flushHintCount;
            break;
        case 7:
            if (len >= 12)
                info.platformCapabilities = loadLe<std::uint32_t>(bytes, off + 8);
            break;
        default:
            break;
        }
        off += len;
    }
    if (off < end && off + 4 > end && info.problems.empty())
        info.problems.push_back(
            fmt::format("{} trailing bytes after the last sub-table", end - off));
    return info;
}

} // namespace daxprobe
