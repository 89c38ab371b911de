#include "probes/capture/census_json.h"

namespace daxprobe
{

nlohmann::json daxCensusToJson(const DaxCensus &census)
{
    nlohmann::json exceptions = nlohmann::json::array();
    for (const auto &e : census.exceptions)
        exceptions.push_back({{"path", e.path}, {"reason", notDaxReasonName(e.reason)}});
    nlohmann::json j = {{"ran", census.observed()},
                        {"error", census.observed() ? std::string() : census.text},
                        {"files_examined", census.files},
                        {"dax_files", census.daxFiles},
                        {"inline_tail", census.inlineTail},
                        {"compressed", census.compressed},
                        {"unknown_reason", census.unknown},
                        {"stopped_early", census.stoppedEarly},
                        {"exceptions", exceptions}};
    // Only a sampled census says more than a capture from before sampling:
    // those keep reading back as they were written.
    if (!census.sampled.empty()) {
        j["files_seen"] = census.seen;
        j["sampled"] = census.sampled;
    }
    return j;
}

// The shape is checked first (validateLiveJson), so value() only fills what
// a shorter capture left out.
DaxCensus daxCensusFromJson(const nlohmann::json &j)
{
    DaxCensus c;
    c.files = j.value("files_examined", std::uint64_t{0});
    c.seen = j.value("files_seen", c.files); // not sampled: every file met was examined
    c.sampled = j.value("sampled", "");
    c.daxFiles = j.value("dax_files", std::uint64_t{0});
    c.inlineTail = j.value("inline_tail", std::uint64_t{0});
    c.compressed = j.value("compressed", std::uint64_t{0});
    c.unknown = j.value("unknown_reason", std::uint64_t{0});
    c.stoppedEarly = j.value("stopped_early", "");
    for (const auto &e : j.value("exceptions", nlohmann::json::array()))
        c.exceptions.push_back(
            {e.value("path", ""), notDaxReasonFrom(e.value("reason", std::string()))});
    if (j.value("ran", false))
        c.observe();
    else
        c.fail(j.value("error", "not recorded"));
    return c;
}

} // namespace daxprobe
