#include "protocol/verdicts.h"

namespace daxprobe::protocol
{

json failedCheckReport(std::string_view why)
{
    return {{"schema", kCheckSchema},
            {"exit_code", 2},
            {"verdict", {{"code", code::CheckFailed}, {"severity", "problem"}, {"summary", why}}}};
}

} // namespace daxprobe::protocol
