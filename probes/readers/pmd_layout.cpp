#include "probes/readers/pmd_layout.h"

#include <algorithm>

namespace daxprobe
{

namespace
{

// Neighbouring extents continuing each other in the file and on the device
// are one run (FIEMAP splits extents at the filesystem's own limits).
std::vector<FileExtent> mergedRuns(std::vector<FileExtent> extents)
{
    std::sort(extents.begin(), extents.end(),
              [](const FileExtent &a, const FileExtent &b) { return a.logical < b.logical; });
    std::vector<FileExtent> runs;
    for (const auto &e : extents) {
        if (!e.placed || e.length == 0)
            continue;
        if (!runs.empty()) {
            FileExtent &last = runs.back();
            if (last.logical + last.length == e.logical &&
                last.physical + last.length == e.physical) {
                last.length += e.length;
                continue;
            }
        }
        runs.push_back(e);
    }
    return runs;
}

} // namespace

PmdLayout pmdLayoutOf(std::vector<FileExtent> extents, std::uint64_t fileSize)
{
    PmdLayout out;
    out.observed = true;
    out.pieces = (fileSize + kPmdSize - 1) / kPmdSize;
    for (const auto &run : mergedRuns(std::move(extents))) {
        std::uint64_t end = std::min(run.logical + run.length, fileSize);
        std::uint64_t first = (run.logical + kPmdSize - 1) / kPmdSize * kPmdSize;
        for (std::uint64_t off = first; off + kPmdSize <= end; off += kPmdSize)
            if ((run.physical + (off - run.logical)) % kPmdSize == 0)
                ++out.ready;
    }
    return out;
}

} // namespace daxprobe
