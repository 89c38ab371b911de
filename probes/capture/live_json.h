#pragma once

#include <nlohmann/json.hpp>

#include "base/result.h"

namespace daxprobe
{

// Checks a capture's live.json before it is replayed: the shape
// liveFactsToJson() writes, every known field of the right JSON type. A
// hand-edited or hostile file (an array, namespaces given as strings, a
// size given as text) is an error naming the offending place, never phantom
// namespaces with empty fields or an exception. Unknown keys are allowed, so
// a newer capture still replays.
Result<void> validateLiveJson(const nlohmann::json &j);

} // namespace daxprobe
