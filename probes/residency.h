#pragma once

#include <cstdint>
#include <string>

namespace daxprobe
{

struct Residency {
    std::string method; // cachestat, mincore, not_applicable
    std::string reason; // why not_applicable, or the error
    std::uint64_t residentBytes = 0;
    std::uint64_t dirtyBytes = 0; // cachestat only
    std::uint64_t sizeBytes = 0;
    bool ok = false;
};

// Page-cache residency of one file, measured without touching its pages.
// Callers must pass isDax from statx first: cachestat on a DAX file oopses
// some kernels (6.12), and mincore of a DAX mapping this process touched
// reports every page resident. DAX files have no page cache: not_applicable.
Residency measureResidency(const std::string &path, bool isDax);

} // namespace daxprobe
