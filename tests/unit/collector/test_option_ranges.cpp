// Every numeric option has a range, the same on the command line and in the
// config file (issue 31, break 5): the edges are refused, with the range.
#include <catch2/catch.hpp>

#include <fstream>

#include "collector/channel.h"
#include "collector/option_ranges.h"
#include "collector/options.h"
#include "tests/unit/collector/tmpdir.h"

using namespace daxprobe;
using namespace daxprobe::collector;

namespace
{
const char *kEdges[] = {"0",
                        "-1",
                        "18446744073709551616",
                        "18446744073709551615",
                        "1e19",
                        "inf",
                        "nan",
                        "-inf",
                        "",
                        "0x10",
                        "1e400",
                        " 5"};
const char *kNames[] = {"max-rows",        "max-bytes",           "max-guests", "guest-rate",
                        "guest-byte-rate", "host-facts-interval", "limit"};
} // namespace

TEST_CASE("numeric options refuse the edges and say the range", "[collector][options][range]")
{
    for (const char *name : kNames) {
        const NumberRange &r = numberRange(name);
        for (const char *edge : kEdges) {
            INFO(name << " " << edge);
            auto v = parseInRange(r, edge);
            REQUIRE_FALSE(v);
            CHECK_THAT(v.error().message,
                       Catch::Contains("out of range: give " + describeRange(r)));
        }
        CHECK(parseInRange(r, "1").value() == 1);
        CHECK(parseInRange(r, fmt::format("{}", r.max)).value() == r.max);
    }
    CHECK(describeRange(numberRange("max-rows")) == "1 to 100000000");
    CHECK(describeRange(numberRange("guest-rate")) == "0.01 to 1000000");
    CHECK(parseInRange(numberRange("guest-rate"), "0.5").value() == 0.5);
    CHECK_FALSE(parseInRange(numberRange("max-rows"), "1.5"));
    CHECK_FALSE(parseInRange(numberRange("max-rows"), "1e3"));
}

TEST_CASE("the config file checks the same ranges", "[collector][options][range]")
{
    TempDir dir;
    std::string path = dir.path() + "/collector.conf";
    for (const char *name : kNames) {
        if (std::string(name) == "limit")
            continue; // query only
        for (const char *edge : {"0", "-1", "18446744073709551615", "1e19", "inf", "nan"}) {
            INFO(name << " " << edge);
            std::ofstream(path) << name << " " << edge << "\n";
            CollectorOptions o;
            auto r = loadConfigFile(path, o);
            REQUIRE_FALSE(r);
            CHECK_THAT(r.error().message, Catch::Contains("out of range: give"));
        }
    }
    std::ofstream(path) << "guest-rate 2.5\nguest-byte-rate 10000000000\nmax-rows 7\n";
    CollectorOptions o;
    REQUIRE(loadConfigFile(path, o));
    CHECK(o.messagesPerSecond == 2.5);
    CHECK(o.bytesPerSecond == 1e10);
    CHECK(o.maxRowsPerVm == 7);
}

TEST_CASE("a token bucket's whole tokens never come from an undefined cast",
          "[collector][options][range]")
{
    TokenBucket b;
    for (double t : {1e19, 1e300, std::numeric_limits<double>::infinity(),
                     std::numeric_limits<double>::quiet_NaN(), -5.0, 0.5}) {
        INFO(t);
        b.tokens = t;
        std::size_t w = b.whole(4096);
        CHECK(w <= 4096);
        CHECK((w == 4096) == (t >= 4096));
    }
    // The largest rate the options allow, its burst and a day's refill: far
    // from where a double loses whole numbers.
    b = TokenBucket{numberRange("guest-byte-rate").max, numberRange("guest-byte-rate").max * 4};
    b.refill(1);
    b.refill(1 + 86400000);
    CHECK(b.tokens == b.burst);
    CHECK(b.whole(std::size_t(-1)) == std::size_t(4e10));
}
