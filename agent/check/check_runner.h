#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/check/report_text.h"
#include "probes/readers/walk_bounds.h"

namespace daxprobe
{

class KmsgReader;
class FaultProbeCache;

struct CheckOptions {
    std::string root = "/";         // where /proc, /sys, /dev are read from
    std::vector<std::string> paths; // --path: extra files to examine
    bool activeChecks = true;       // MAP_SYNC test file on writable DAX mounts
    WalkBounds walk;                // --walk-files, --walk-ms
    std::string captureDir;         // --capture: copy every file read + live facts here
    std::string replayDir;          // --replay: compute the report from a capture
    std::string stateDir; // --state-dir: where each DIMM's last unsafe-shutdown count is kept
    bool json = false;    // the JSON document, not the text for people
    TextStyle style = TextStyle::Plain;     // the text's colours, or journal priorities
    KmsgReader *kmsg = nullptr;             // the agent's log, open between checks
    FaultProbeCache *faultProbes = nullptr; // the agent's perf/tracepoint answers, kept
};

// One of report and text, the form options.json asked for.
struct CheckOutcome {
    nlohmann::json report; // the documented "daxprobe.check/1" document
    std::string text;      // the same report for people
    int exitCode = 2;      // 0 verified, 1 problem found, 2 check failed
};

// Gathers facts, derives verdicts, returns the report in the form asked
// for. Never throws.
CheckOutcome runCheck(const CheckOptions &options);

} // namespace daxprobe
