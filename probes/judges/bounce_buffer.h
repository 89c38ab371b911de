#pragma once

#include <optional>

#include "probes/readers/boot_memory.h"

namespace daxprobe
{

struct Verdict;

// bounce_buffer_for_hotplug (a warning with its size and the remedy) when
// the bounce buffer exists only because of the hotplug range; nullopt
// otherwise (no buffer, RAM above 4 GiB that needs it, or it was asked for).
std::optional<Verdict> judgeBounceBuffer(const BounceBufferFacts &facts);

} // namespace daxprobe
