#pragma once

#include <string>

#include "probes/readers/fault_profile.h"

namespace daxprobe
{

// How a DAX mapping was served, from observed tracepoint counts (never from
// the namespace's align: alignment is not destiny, file placement is), and
// for fallbacks their cause from the file's extents and its device.
//   pmd        every DAX fault was a 2 MiB fault that succeeded
//   fallback   some 2 MiB faults fell back to 4 KiB
//   pte        only 4 KiB DAX faults
//   page_cache not a DAX file: faults went through the page cache
//   unknown    the tracepoints could not be counted here
struct MappingOutcome {
    std::string code;
    std::string summary;
    std::string advice; // empty unless there is something to do
    // fallback only: "layout" (the file's extents), "device" (the driver
    // served 4 KiB on 2 MiB-ready extents), or empty (extents unknown)
    std::string cause;
};

MappingOutcome judgeMapping(const FaultProfile &profile);

} // namespace daxprobe
