#pragma once

#include <string>

#include "base/result.h"
#include "probes/readers/dimm.h"

namespace daxprobe
{

// What the agent remembers between checks and across boots: each DIMM's
// unsafe-shutdown count when it last looked (issue 36), in one file of its
// state directory (--state-dir; the unit's StateDirectory=).
inline constexpr const char *kShutdownMemoryFile = "dimm-shutdowns.json";

// The counts in `stateDir`'s file: none when there is no file yet. A file
// that is not what this program wrote (too big, not JSON, not an object of
// counts) is an error, never read as counts.
Result<ShutdownCounts> loadShutdownCounts(const std::string &stateDir);

// `seen` updated with every DIMM's live count (SMART), the rest kept.
ShutdownCounts updatedShutdownCounts(ShutdownCounts seen, const std::vector<NdDimm> &dimms);

// Replaces the file (a new one renamed over it, docs/conventions.md, 14).
Result<void> saveShutdownCounts(const std::string &stateDir, const ShutdownCounts &counts);

} // namespace daxprobe
