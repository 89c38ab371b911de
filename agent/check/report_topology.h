#pragma once

#include <nlohmann/json.hpp>

#include "probes/readers/topology.h"

namespace daxprobe
{

// The nd topology's fields of daxprobe.check/1 (agent/REPORT.md), in
// ndctl's and daxctl's names. Written here, not by the capture format
// (probes/capture/topology_json.h), so a change to a fixture's live.json
// never changes the public report; the include-graph check keeps the
// renderers away from probes/capture.
nlohmann::json busReportJson(const NdBus &b);
nlohmann::json regionReportJson(const NdRegion &r);
nlohmann::json namespaceReportJson(const NdNamespace &n);
nlohmann::json daxDeviceReportJson(const DaxDevice &d);
// ndctl list -D's names, and the regions each DIMM backs.
nlohmann::json dimmReportJson(const NdDimm &d);

} // namespace daxprobe
