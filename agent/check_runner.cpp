#include "check_runner.h"

namespace daxprobe {

// Placeholder until the probes land; keeps the daemon buildable meanwhile.
CheckOutcome runCheck(const CheckOptions &)
{
    return {nlohmann::json{{"schema", "daxprobe.check/1"}, {"verdict", {{"code", "check_failed"}}}}, 2};
}

nlohmann::json collectMetrics(const std::string &)
{
    return nlohmann::json::object();
}

} // namespace daxprobe
