#pragma once

#include <string>

#include "base/result.h"
#include "base/unique_fd.h"
#include "probes/readers/dimm.h"

namespace daxprobe
{

// What the agent remembers between checks and across boots: each DIMM's
// unsafe-shutdown count when it last looked (issue 36), in one file of its
// state directory (--state-dir; the unit's StateDirectory=).
inline constexpr const char *kShutdownMemoryFile = "dimm-shutdowns.json";

// The state directory, resolved once (no other user's symlink followed,
// base/safe_path.h) and used through this fd by the load and the save, so a
// path swapped in between changes nothing. Refused unless owned by the
// caller and writable by no one else.
struct StateDir {
    UniqueFD fd;
    std::string path; // for messages only
};
Result<StateDir> openStateDir(const std::string &path);

// The counts in the state directory's file: none when there is no file yet. A file
// that is not what this program wrote (too big, not JSON, not an object of
// counts) is an error, never read as counts.
Result<ShutdownCounts> loadShutdownCounts(const StateDir &dir);

// `seen` updated with every DIMM's live count (SMART), the rest kept.
ShutdownCounts updatedShutdownCounts(ShutdownCounts seen, const std::vector<NdDimm> &dimms);

// Replaces the file (a new one renamed over it, docs/conventions.md, 14).
Result<void> saveShutdownCounts(const StateDir &dir, const ShutdownCounts &counts);

} // namespace daxprobe
