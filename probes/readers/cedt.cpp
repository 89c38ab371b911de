#include "probes/readers/cedt.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "probes/readers/acpi_table.h"

namespace daxprobe
{

namespace
{

constexpr std::size_t kSubHeader = 4; // type, reserved, record length
constexpr std::size_t kChbsSize = 32;
constexpr std::size_t kCfmwsFixed = 36; // before the interleave target list
constexpr std::uint64_t kWindowAlign = 256ULL << 20;

// ENIW: 0-4 are 1-16 ways, 8-10 are 3, 6 and 12 (the kernel's eiw_to_ways).
unsigned decodeWays(std::uint8_t eniw)
{
    if (eniw <= 4)
        return 1U << eniw;
    if (eniw >= 8 && eniw <= 10)
        return 3U << (eniw - 8);
    return 0;
}

// HBIG: 256 bytes to 16 KiB (the kernel's eig_to_granularity).
std::uint64_t decodeGranularity(std::uint32_t hbig)
{
    return hbig <= 6 ? 256ULL << hbig : 0;
}

void readChbs(std::string_view b, std::size_t off, std::uint16_t len, CedtInfo &info)
{
    if (len < kChbsSize) {
        info.problems.push_back(fmt::format("CHBS at offset {} is {} bytes", off, len));
        return;
    }
    info.hostBridges.push_back(
        {loadLe<std::uint32_t>(b, off + 4), loadLe<std::uint32_t>(b, off + 8),
         loadLe<std::uint64_t>(b, off + 16), loadLe<std::uint64_t>(b, off + 24)});
}

// The checks the kernel's cxl_acpi makes before it uses a window (it skips
// a window that fails them, saying so in the log).
void checkWindow(const CedtWindow &w, std::uint8_t eniw, std::uint32_t hbig, std::size_t off,
                 CedtInfo &info)
{
    if (w.interleaveWays == 0)
        info.problems.push_back(
            fmt::format("CFMWS at offset {}: interleave ways encoding {} is invalid", off, eniw));
    if (w.granularity == 0)
        info.problems.push_back(
            fmt::format("CFMWS at offset {}: granularity encoding {} is invalid", off, hbig));
    if (w.base % kWindowAlign != 0 || w.size % kWindowAlign != 0 || w.size == 0)
        info.problems.push_back(fmt::format(
            "CFMWS at offset {}: window {:#x}+{:#x} is not 256 MiB aligned", off, w.base, w.size));
}

void readCfmws(std::string_view b, std::size_t off, std::uint16_t len, CedtInfo &info)
{
    if (len < kCfmwsFixed) {
        info.problems.push_back(fmt::format("CFMWS at offset {} is {} bytes", off, len));
        return;
    }
    CedtWindow w;
    w.base = loadLe<std::uint64_t>(b, off + 8);
    w.size = loadLe<std::uint64_t>(b, off + 16);
    auto eniw = loadLe<std::uint8_t>(b, off + 24);
    auto hbig = loadLe<std::uint32_t>(b, off + 28);
    w.interleaveWays = decodeWays(eniw);
    w.granularity = decodeGranularity(hbig);
    w.restrictions = loadLe<std::uint16_t>(b, off + 32);
    checkWindow(w, eniw, hbig, off, info);
    std::size_t targets = (len - kCfmwsFixed) / 4;
    if (w.interleaveWays > targets) {
        info.problems.push_back(fmt::format("CFMWS at offset {}: {} ways but room for {} targets",
                                            off, w.interleaveWays, targets));
        return;
    }
    for (unsigned i = 0; i < w.interleaveWays; ++i)
        w.targets.push_back(loadLe<std::uint32_t>(b, off + kCfmwsFixed + 4 * i));
    info.windows.push_back(std::move(w));
}

} // namespace

std::vector<std::string> CedtWindow::restrictionNames() const
{
    static constexpr std::pair<std::uint16_t, const char *> kNames[] = {{kCedtType2, "type2"},
                                                                        {kCedtType3, "type3"},
                                                                        {kCedtVolatile, "volatile"},
                                                                        {kCedtPmem, "pmem"},
                                                                        {kCedtFixed, "fixed"}};
    std::vector<std::string> out;
    for (const auto &[bit, name] : kNames)
        if (restrictions & bit)
            out.emplace_back(name);
    return out;
}

bool CedtInfo::pmemWindow() const
{
    for (const auto &w : windows)
        if (w.pmemCapable())
            return true;
    return false;
}

CedtInfo parseCedt(std::string_view bytes)
{
    CedtInfo info;
    info.present = true;
    info.exists = true;
    if (bytes.size() < kAcpiHeaderSize) {
        info.problems.push_back(
            fmt::format("table is {} bytes, shorter than an ACPI header", bytes.size()));
        return info;
    }
    AcpiHeader header = checkAcpiHeader(bytes, "CEDT", info.problems);
    info.length = header.length;
    info.checksumOk = header.checksumOk;

    // Walk only what both the header and the bytes vouch for.
    std::size_t end = header.walkEnd;
    std::size_t off = kAcpiHeaderSize;
    while (off + kSubHeader <= end) {
        auto type = loadLe<std::uint8_t>(bytes, off);
        auto len = loadLe<std::uint16_t>(bytes, off + 2);
        if (len < kSubHeader || off + len > end) {
            info.problems.push_back(
                fmt::format("sub-table at offset {} has bad length {}", off, len));
            return info;
        }
        if (type == 0)
            readChbs(bytes, off, len, info);
        else if (type == 1)
            readCfmws(bytes, off, len, info);
        off += len; // CXIMS, RDPAS, CSDS: not needed here
    }
    if (off < end)
        info.problems.push_back(
            fmt::format("{} trailing bytes after the last sub-table", end - off));
    return info;
}

} // namespace daxprobe
