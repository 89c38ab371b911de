#pragma once

#include <nlohmann/json.hpp>

#include "probes/judges/cxl_verdict.h"

namespace daxprobe
{

// The report's "cxl" section (agent/REPORT.md), in `cxl list -vvv`'s names
// where they mean the same (memdev -> dev, region -> dev, serial,
// pmem_size, ram_size, size, type, interleave_ways, decode_state).
nlohmann::json cxlReportJson(const CxlReport &cxl);

} // namespace daxprobe
