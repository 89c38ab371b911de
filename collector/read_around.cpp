#include "collector/read_around.h"

#include <fmt/format.h>

namespace daxprobe::collector
{

namespace
{

constexpr std::uint64_t kWindow = 4ull << 20; // two 2 MiB folios

double mibOf(std::uint64_t bytes)
{
    return static_cast<double>(bytes) / (1 << 20);
}

// A path in a shell command: single-quoted, a quote in it closed and escaped.
std::string shellQuoted(const std::string &s)
{
    std::string out = "'";
    for (char c : s)
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

} // namespace

std::optional<ReadAround> judgeReadAround(const ReadAroundInput &in)
{
    if (in.cachedBytes <= in.mappedBytes)
        return std::nullopt;
    const std::uint64_t extra = in.cachedBytes - in.mappedBytes;
    if (extra < kWindow || extra <= in.mappedBytes)
        return std::nullopt;
    ReadAround r;
    r.extraBytes = extra;
    const std::string head =
        fmt::format("{:.1f} MiB of host page cache for {:.1f} MiB QEMU maps: read around the "
                    "pages the guest touched",
                    mibOf(in.cachedBytes), mibOf(in.mappedBytes));
    // Dropping the file's clean pages that no one maps: what stays is what
    // QEMU maps, and a large folio holding a mapped page stays whole.
    const std::string drop = fmt::format(
        "dd if={} iflag=nocache count=0 (drops the pages no process maps)", shellQuoted(in.path));
    if (in.hugepageAdvised) {
        r.cause = head + "; QEMU advises MADV_HUGEPAGE on guest memory (smaps VmFlags hg), so "
                         "the host reads 4 MiB (two 2 MiB folios) around each first touch, "
                         "whatever read_ahead_kb says; it is clean page cache, reclaimed first "
                         "when the host is short of memory";
        r.remedy = "release it now: " + drop +
                   "; a folio holding a page QEMU maps stays, so about half remains";
    } else if (in.readAheadKb && *in.readAheadKb > 128) {
        r.cause = head + fmt::format("; the device holding the file reads {} KiB around each "
                                     "fault (read_ahead_kb)",
                                     *in.readAheadKb);
        r.remedy = fmt::format("echo 128 > {} before QEMU opens the file (a file takes its "
                               "device's read-ahead when opened; sequential reads of everything "
                               "else on that device get less read-ahead too); release it now: {}",
                               in.readAheadPath, drop);
    } else {
        r.cause = head;
        r.remedy = "release it now: " + drop;
    }
    return r;
}

} // namespace daxprobe::collector
