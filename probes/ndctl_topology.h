#pragma once

#include "root.h"
#include "topology.h"

namespace daxprobe {

// The live backend: walks libndctl/libdaxctl (which read /sys/bus/nd
// themselves, so this cannot run on a fixture tree). Never fails: a missing
// nd bus or libndctl error ends up in Topology::error.
// `root` is used only for per-blockdev badblocks.
Topology readTopologyWithNdctl(const Root &root);

} // namespace daxprobe
