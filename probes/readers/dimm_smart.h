#pragma once

#include <optional>
#include <string>
#include <vector>

#include "probes/readers/dimm.h"
#include "probes/readers/libraries.h"

namespace daxprobe
{

// Each DIMM's health (NdDimm::health) from its SMART command through
// libndctl, as `ndctl list -DH` reads it (docs/conventions.md, 2): loaded
// with dlopen() when there is a DIMM, so a check without one pays nothing.
// `soname`: the library to load (tests name a missing one).
// Returns the load error when libndctl could not be loaded (each DIMM's
// health is then failed with a short text; the report says it once).
std::optional<MissingLibrary> readDimmHealth(std::vector<NdDimm> &dimms,
                                             const std::string &soname = "libndctl.so.6");

// SMART encodes a temperature in 1/16 degree Celsius, bit 15 the sign.
double decodeSmartTemperature(unsigned raw);

// The health bits (ND_SMART_*_HEALTH) as ndctl names the state.
std::string smartHealthState(unsigned health);

} // namespace daxprobe
