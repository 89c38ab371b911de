#pragma once

#include <cstdint>
#include <string>

#include "base/root.h"
#include "probes/readers/topology.h"

namespace daxprobe
{

// The nd bus topology as `ndctl list -BRN` (and `daxctl list` for the
// character device) reports it, read from sysfs through a Root: the same
// attributes libndctl/libdaxctl read, without loading them (with their
// dependencies they were 80% of a check's cost). Works on a live root and on
// a captured tree (tests/fixtures/<scenario>/sys/bus/nd/...).
//
// Never fails: no nd bus at all (libnvdimm not loaded, no NVDIMM) is an
// observed, empty topology, as libndctl reports it; an unreadable sysfs
// leaves it failed, with the error.
Topology readTopologyFromSysfs(const Root &root);

// Pieces of the above, exposed for the unit tests.
// `regionN` / `namespaceN.M` / `pfnN.M`: the numbers, for ordering by id.
bool parseNdDeviceName(const std::string &name, const std::string &prefix, unsigned &region,
                       unsigned &id);
// ndctl's persistence domain names for the sysfs attribute's text (absent: unknown).
const char *persistenceDomainName(const std::string &attr);
// "" for an unset or all-zero uuid, as ndctl omits it.
std::string uuidOrEmpty(const std::string &attr);

} // namespace daxprobe
