#pragma once

#include <nlohmann/json.hpp>

#include "probes/readers/census.h"

namespace daxprobe
{

// A mount's DAX census in a capture's live.json (mounts[MP].census): the
// walk is live-only, so a capture replays its answer. A census nobody took
// is left out, so older captures write back as they were.
nlohmann::json daxCensusToJson(const DaxCensus &census);
DaxCensus daxCensusFromJson(const nlohmann::json &j);

} // namespace daxprobe
