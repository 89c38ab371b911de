#pragma once

#include <cstdint>
#include <string>

#include "base/evidence_state.h"

namespace daxprobe
{

// Observed: the bytes below are the answer (text: why not_applicable).
// Failed: text is the error. Not run: nobody measured (a DAX file's phases).
struct Residency : EvidenceOutcome {
    std::string method; // cachestat, mincore, not_applicable
    std::uint64_t residentBytes = 0;
    std::uint64_t dirtyBytes = 0; // cachestat only
    std::uint64_t sizeBytes = 0;
};

// Page-cache residency of one file, measured without touching its pages.
// Callers must pass isDax from statx first: cachestat on a DAX file oopses
// some kernels (6.12), and mincore of a DAX mapping this process touched
// reports every page resident. DAX files have no page cache: not_applicable.
Residency measureResidency(const std::string &path, bool isDax);
// The same of an open file (`label` names it in errors), e.g. one we created.
Residency measureResidency(int fd, const std::string &label, bool isDax);

} // namespace daxprobe
