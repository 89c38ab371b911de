#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace daxprobe
{

constexpr std::uint64_t kPmdSize = 2ull << 20;

// One extent of a file as FS_IOC_FIEMAP gives it: byte offsets in the file
// and in its block device.
struct FileExtent {
    std::uint64_t logical = 0;
    std::uint64_t physical = 0;
    std::uint64_t length = 0;
    bool placed = true; // false: inline, encoded, or not yet allocated (no fixed address)
};

// How the file's data lies on its device, in the 2 MiB pieces a PMD fault
// maps (file offsets 0, 2 MiB, ...). A piece is ready when one physically
// contiguous run of the device, starting on a 2 MiB boundary, holds all of it:
// only then can the filesystem hand DAX a 2 MiB extent (fs/dax.c falls back
// on a shorter or misaligned one). The tail short of 2 MiB is never ready.
struct PmdLayout {
    bool observed = false;
    std::uint64_t pieces = 0;
    std::uint64_t ready = 0;
};

PmdLayout pmdLayoutOf(std::vector<FileExtent> extents, std::uint64_t fileSize);

// The device a file's data lives on, as far as 2 MiB mappings care: its nd
// bus provider (nfit_test.N hands out vmalloc()ed memory one 4 KiB page at a
// time: tools/testing/nvdimm/pmem-dax.c), namespace, mode and align.
struct DeviceFacts {
    std::string blockdev; // pmem0; empty when the file is not on an nd block device
    std::string provider; // ACPI.NFIT, nfit_test.0, virtio-pmem
    std::string ns;       // namespace0.0
    std::string mode;
    std::uint64_t align = 0;
    // Where the filesystem's byte 0 lies in physical memory, modulo 2 MiB
    // (a partition off the grid, as Kata's image builder makes it).
    std::uint64_t memoryOffset = 0;

    bool servesOnePageAtATime() const { return provider.rfind("nfit_test", 0) == 0; }
};

} // namespace daxprobe
