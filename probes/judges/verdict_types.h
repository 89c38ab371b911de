#pragma once

#include <string>
#include <vector>

#include "protocol/verdicts.h"

namespace daxprobe
{

// The verdict codes live with the protocol (protocol/verdicts.h): the
// collector counts what these probes decide.
namespace code = protocol::code;

enum class Severity { Ok, Warning, Problem };
const char *severityName(Severity s);

struct Evidence {
    std::string check;  // mountinfo, queue/dax, statx, map_sync, kmsg, ndctl, nfit, ...
    std::string result; // what it said
};

struct Verdict {
    std::string code;
    Severity severity = Severity::Ok;
    std::string summary;
    std::vector<Evidence> evidence;
    std::string remedy; // the command that fixes it; empty when nothing to fix
    // The remedy reconfigures a namespace from inside this system, which a
    // read-only region refuses (dimm_verdict.h: withholdReconfiguration).
    bool remedyReconfigures = false;
    std::vector<std::string> warnings;
};

} // namespace daxprobe
