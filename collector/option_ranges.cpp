#include "collector/option_ranges.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

namespace daxprobe::collector
{

namespace
{

// Upper bounds are far above any real use and far below where arithmetic
// on them could overflow: a bucket's burst (4 s of --guest-byte-rate) stays
// below 2^53, rows and bytes fit SQLite's 64-bit integers.
constexpr NumberRange kRanges[] = {
    {"max-rows", 1, 1e8, true},              // reports kept per VM
    {"max-bytes", 1, 0x1p40, true},          // report bytes kept per VM: 1 TiB
    {"max-guests", 1, 1e5, true},            // channels served at once (one fd each)
    {"guest-rate", 0.01, 1e6, false},        // messages per second per guest
    {"guest-byte-rate", 1, 1e10, false},     // bytes per second per guest
    {"host-facts-interval", 1, 86400, true}, // seconds
    {"limit", 1, 1e6, true},                 // query: history rows
};

bool plainDecimal(std::string_view s, bool integer)
{
    if (s.empty())
        return false;
    for (char c : s) {
        bool digit = c >= '0' && c <= '9';
        if (!digit && (integer || (c != '.' && c != 'e' && c != 'E' && c != '-' && c != '+')))
            return false;
    }
    return s[0] != '-' && s[0] != '+';
}

} // namespace

const NumberRange &numberRange(std::string_view name)
{
    for (const auto &r : kRanges)
        if (r.name == name)
            return r;
    std::fprintf(stderr, "numberRange: no option %.*s\n", static_cast<int>(name.size()),
                 name.data());
    std::abort();
}

std::string describeRange(const NumberRange &r)
{
    return fmt::format("{} to {}", r.min, r.max);
}

Result<double> parseInRange(const NumberRange &r, std::string_view text)
{
    auto refuse = [&] {
        return failf(ERANGE, "{} is out of range: give {}{}", text, describeRange(r),
                     r.integer ? " (a whole number)" : "");
    };
    if (!plainDecimal(text, r.integer))
        return refuse();
    std::string s(text);
    char *end = nullptr;
    errno = 0;
    double v = std::strtod(s.c_str(), &end);
    // NaN compares false both ways: test for "inside", never for "outside".
    if (errno == ERANGE || *end || !std::isfinite(v) || !(v >= r.min && v <= r.max) ||
        (r.integer && v != std::floor(v)))
        return refuse();
    return v;
}

} // namespace daxprobe::collector
