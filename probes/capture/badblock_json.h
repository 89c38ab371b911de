#pragma once

#include <nlohmann/json.hpp>

#include "probes/readers/badblocks.h"

namespace daxprobe
{

// A mount's bad-block walk in a capture's live.json ("badblocks", by mount
// point): the walk is live-only, so a capture replays its answer.
nlohmann::json badblockScanToJson(const BadblockScan &scan);
BadblockScan badblockScanFromJson(const nlohmann::json &j);

} // namespace daxprobe
