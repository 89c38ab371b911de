#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/root.h"
#include "probes/readers/topology.h"

namespace daxprobe
{

// A namespace's media errors as `ndctl list --media-errors` gives them:
// sectors from the start of its data. Ranges past the data are dropped, a
// range crossing an end is cut there.
// regionRanges: the region's `badblocks` (sectors from the region's start);
// dataStart: how many bytes into the region the namespace's data begins.
std::vector<BadRange> rangesInNamespace(const std::vector<BadRange> &regionRanges,
                                        std::uint64_t dataStart, std::uint64_t size);

// Fills ns.badRanges and ns.badblockCount. A namespace with a disk: the
// disk's own list (the pmem driver keeps it relative to the data). A
// device-DAX namespace has none: the region's list, placed with the
// region's and the dax device's `resource` (the physical address where
// /dev/daxX.Y begins, after the info block), as libndctl does.
// claimPath: the dax device's directory (the namespace's claim).
void readMediaErrors(const Root &root, const std::string &regionPath, const std::string &claimPath,
                     NdNamespace &ns);

} // namespace daxprobe
