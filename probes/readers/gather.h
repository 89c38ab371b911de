#pragma once

#include <string>
#include <vector>

#include "base/root.h"
#include "probes/readers/facts.h"
#include "probes/readers/walk_bounds.h"

namespace daxprobe
{

struct GatherOptions {
    bool live = true;         // also observe what only a running system shows
    bool activeChecks = true; // MAP_SYNC test file on writable DAX candidates
    std::vector<std::string> paths;
    WalkBounds walk;            // over the census's and the bad-block mapping's own bounds
    KmsgReader *kmsg = nullptr; // kept open between checks (the agent), or read once
    FaultProbeCache *faultProbes = nullptr; // kept between checks (the agent), or probed now
};

// The imperative shell: reads everything the verdicts need. Never fails;
// what could not be read is recorded in the facts as evidence.
Facts gatherFacts(const Root &root, const GatherOptions &options);

} // namespace daxprobe
