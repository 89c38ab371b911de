#pragma once

#include <nlohmann/json.hpp>

#include "probes/readers/topology.h"

namespace daxprobe
{

// The topology as a capture's live.json holds it (the names of ndctl's JSON).
void to_json(nlohmann::json &j, const NdBus &b);
void from_json(const nlohmann::json &j, NdBus &b);
void to_json(nlohmann::json &j, const NdRegion &r);
void from_json(const nlohmann::json &j, NdRegion &r);
void to_json(nlohmann::json &j, const NdNamespace &n);
void from_json(const nlohmann::json &j, NdNamespace &n);
void to_json(nlohmann::json &j, const DaxDevice &d);
void from_json(const nlohmann::json &j, DaxDevice &d);
void to_json(nlohmann::json &j, const DimmRegion &r);
void from_json(const nlohmann::json &j, DimmRegion &r);
void to_json(nlohmann::json &j, const NdDimm &d);
void from_json(const nlohmann::json &j, NdDimm &d);
void to_json(nlohmann::json &j, const Topology &t);
void from_json(const nlohmann::json &j, Topology &t);

} // namespace daxprobe
