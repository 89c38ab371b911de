#pragma once

#include <string>
#include <string_view>

#include "base/result.h"

namespace daxprobe::collector
{

// One numeric option of the collector and the values it takes. A value
// outside the range is refused (exit 2), never clamped or wrapped: 1e19
// bytes/s once turned the token bucket's arithmetic into undefined
// behaviour and the collector into a busy loop (issue 31).
struct NumberRange {
    std::string_view name; // as in the config file; the flag is "--" + name
    double min, max;       // every bound is exact in a double (below 2^53)
    bool integer;
};

// The table: every numeric option of `run`, its config file and `query`.
// Unknown names are a programming error (std::abort).
const NumberRange &numberRange(std::string_view name);

// "1 to 100000000": what the messages and --help say.
std::string describeRange(const NumberRange &r);

// The value of `text`, plain decimal (integers: digits only; others may have
// a fraction and an exponent), within the range; otherwise an error that
// names the value and the range (the caller names the option). "inf", "nan", "-1", "0x10" and
// 2^64 are refused alike.
Result<double> parseInRange(const NumberRange &r, std::string_view text);

} // namespace daxprobe::collector
