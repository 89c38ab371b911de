#pragma once

#include <string>
#include <string_view>

namespace daxprobe
{

// The kernel's own words for "this CXL memory cannot be used" (drivers/cxl;
// seen on Debian's 6.12 and 7.2 under QEMU 7.2, ../shared/cxl-testbed.md),
// each with its cause and what removes it, as dax_refusals.h does for
// filesystems.
struct CxlRefusal {
    const char *message; // what the kernel logs (a substring of the line)
    const char *code;    // protocol/verdicts.h
    const char *cause;   // why, in words
    const char *remedy;
};

// The refusal a kernel line reports, or null.
const CxlRefusal *findCxlRefusal(std::string_view message);

// The device a driver's line names: "cxl region0: Failed ..." -> "region0",
// "cxl_pci 0000:0d:00.0: ..." -> "0000:0d:00.0"; empty when there is none.
std::string cxlLineDevice(std::string_view message);

} // namespace daxprobe
