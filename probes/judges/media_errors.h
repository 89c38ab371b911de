#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "probes/judges/verdict_types.h"
#include "probes/readers/topology.h"

namespace daxprobe
{

// Bytes [offset, offset + length) of a namespace's device (/dev/pmemX or
// /dev/daxX.Y) on bad media.
struct ByteRange {
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
    bool operator==(const ByteRange &) const = default;
};

// ns.badRanges in bytes of its device.
std::vector<ByteRange> mediaErrorBytes(const NdNamespace &ns);

// "bytes 32768-36863 of /dev/dax1.2" (every range, inclusive ends).
std::string mediaErrorText(const NdNamespace &ns);

// What else the namespace verdict needs to know about its media errors.
struct MediaErrorContext {
    bool mounted = false;       // a filesystem on it: the mount's badblocks names the files
    const NdBus *bus = nullptr; // its region's bus: can it clear errors?
    bool systemRam = false;     // its dax device is kmem's: the bytes are RAM now
};

// Adds the namespace's media errors to its verdict (issue 35): where they are
// on its device; unmounted, `ndctl clear-errors` where the bus can clear
// them. Nothing when it has none.
void judgeMediaErrors(const NdNamespace &ns, const MediaErrorContext &ctx, Verdict &v);

} // namespace daxprobe
