#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "probes/readers/census.h"

namespace daxprobe
{

// Bounds of a census: it runs in every check, the boot hook's and each of
// the agent's rechecks included, so a large root is sampled (at most
// maxFiles examined, spread over the whole tree) and a walk longer than
// maxTime stops early (and says so) rather than adding seconds to every
// check under TCG.
struct CensusLimits {
    std::uint64_t maxFiles = 5000;
    std::chrono::milliseconds maxTime{500};
    std::size_t maxNamed = 16; // not-DAX files named; all examined are counted
};

// statx (STATX_ATTR_DAX) of the regular files of the mount at `mountPoint`
// on device major:minor, through the shared walk (file_walk.h): every one
// up to maxFiles, else a StrideSample (stride_sample.h) of at most maxFiles
// in walk order; for a file that is not DAX, the reason FIEMAP or statx
// gives.
DaxCensus takeDaxCensus(const std::string &mountPoint, unsigned major, unsigned minor,
                        const CensusLimits &limits = {});

} // namespace daxprobe
