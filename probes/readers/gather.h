#pragma once

#include <string>
#include <vector>

#include "base/root.h"
#include "probes/readers/facts.h"

namespace daxprobe
{

struct GatherOptions {
    bool live = true;         // also observe what only a running system shows
    bool activeChecks = true; // MAP_SYNC test file on writable DAX candidates
    std::vector<std::string> paths;
    KmsgReader *kmsg = nullptr;             // kept open between checks (the agent), or read once
    FaultProbeCache *faultProbes = nullptr; // kept between checks (the agent), or probed now
};

// The imperative shell: reads everything the verdicts need. Never fails;
// what could not be read is recorded in the facts as evidence.
Facts gatherFacts(const Root &root, const GatherOptions &options);

} // namespace daxprobe
