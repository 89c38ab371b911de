#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace daxprobe::collector
{

// A pmem backing file's host page cache against what QEMU maps of it. The
// guest reads its NVDIMM or virtio-pmem through QEMU's mapping of the file:
// each first touch is a host page fault, and the host kernel reads around
// it into its page cache. QEMU advises MADV_HUGEPAGE on guest memory (smaps
// VmFlags "hg"), and for such a mapping the kernel reads two 2 MiB folios
// around the fault "even if readahead is disabled" (mm/filemap.c): measured
// on this project's 6.18 host with QEMU 7.2, 40 one-byte reads 6 MiB apart
// cached 160 MiB of the file for 2.5 MiB QEMU mapped, with read_ahead_kb
// 8192, 128 and 0 alike. Without the advice (another VMM) the window is the
// device's read_ahead_kb (the same 40 reads through a plain shared mapping:
// 238 MiB at 8192, 5 MiB at 128).
struct ReadAroundInput {
    std::string path;
    std::uint64_t cachedBytes = 0; // the file's host page cache
    std::uint64_t mappedBytes = 0; // Rss of QEMU's mapping(s) of it
    bool hugepageAdvised = false;
    std::optional<std::uint64_t> readAheadKb;
    std::string readAheadPath;
};

struct ReadAround {
    std::uint64_t extraBytes = 0; // cached and not mapped
    std::string cause;
    std::string remedy;
};

// Named when the page cache is more than twice what QEMU maps and the rest
// is at least 4 MiB (one read-around window): below that it is noise.
std::optional<ReadAround> judgeReadAround(const ReadAroundInput &in);

} // namespace daxprobe::collector
