#pragma once

#include <optional>
#include <string>
#include <vector>

#include "probes/judges/verdict_types.h"
#include "probes/readers/badblocks.h"

namespace daxprobe
{

constexpr std::uint64_t kPoisonPage = 4096; // the kernel clears poison a whole page at a time

// A file with bad sectors, and the write that clears them.
struct DamagedFile {
    std::string path;
    std::vector<DamagedExtent> pieces;
    std::string rewrite; // dd over its damaged pages, through the filesystem; empty when
                         // the bus cannot clear poison (BadblockScan::clearsPoison)
};

// What a mount's bad sectors hit (badblock_files.cpp).
struct BadblockReport {
    const BadblockScan *scan = nullptr;
    std::uint64_t badSectors = 0;   // the ranges' sectors inside this filesystem's device
    std::vector<DamagedFile> files; // by path
    std::vector<BadRange> unowned;  // sectors of the filesystem no walked file holds
    Verdict verdict;
};

// Pure. Null when the scan names no bad sector inside the filesystem.
std::optional<BadblockReport> judgeBadblocks(const BadblockScan &scan);

// The ranges (clipped to [start, start+sectors)) minus the sectors the
// extents cover: what no file holds.
std::vector<BadRange> unownedRanges(const BadblockScan &scan);

// `dd` rewriting the whole pages under [offset, offset+length) of `path`
// with zeros: those pages cannot be read anyway, and only a whole-page write
// through the filesystem clears the poison.
std::string rewriteCommand(const std::string &path, std::uint64_t offset, std::uint64_t length);

} // namespace daxprobe
