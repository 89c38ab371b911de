#pragma once

#include <optional>
#include <string>
#include <vector>

#include "probes/judges/verdict_types.h"
#include "probes/readers/facts.h"

namespace daxprobe
{

// CXL persistent memory (issue 33): what the CEDT and /sys/bus/cxl show,
// and what is decided about it. The report's "cxl" (agent/REPORT.md).
struct CxlMemdevReport {
    const CxlMemdev *memdev = nullptr;
    std::optional<Verdict> verdict; // none when its pmem is in a region, or it has none
};

struct CxlDecoderReport {
    const CxlDecoder *decoder = nullptr;
    // Whether the decoder is committed: the port's decoders_committed (6.7+);
    // else inferred from its region (a committed region commits every
    // decoder that has a commit operation, which a passthrough decoder has
    // not); null when nothing says.
    std::optional<bool> committed;
};

struct CxlRegionReport {
    const CxlRegion *region = nullptr;
    std::string ndRegion; // the libnvdimm region it became (same id, on the CXL nd bus)
    Verdict verdict;
};

struct CxlReport {
    bool present = false; // a CEDT, or a device on /sys/bus/cxl
    bool pmem = false;    // a pmem-capable window, or a memdev with pmem capacity
    const CedtInfo *cedt = nullptr;
    const CxlBus *bus = nullptr;
    std::vector<CxlMemdevReport> memdevs;
    std::vector<CxlDecoderReport> decoders;
    std::vector<CxlRegionReport> regions;
    std::vector<Verdict> problems; // system-wide: what the kernel refused, no memdev

    // Every verdict of the section, problems first.
    std::vector<const Verdict *> verdicts() const;
};

CxlReport judgeCxl(const Facts &facts);

// Whether this kernel gives a port with one downstream port a passthrough
// decoder without looking for HDM decoders (before 7bba261e0aa6, v6.4, and
// its 6.3.2 backport; the 6.1.y backport failed to apply). On such a kernel
// the port's hardware decoder is never committed.
bool passthroughForSingleDport(const std::string &kernelRelease);

} // namespace daxprobe
