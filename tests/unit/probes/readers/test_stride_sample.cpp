// The census's sampling rule (stride_sample.h): at most N items, spread over
// the whole stream, the same every run.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "probes/readers/stride_sample.h"

using namespace daxprobe;

namespace
{

// The indices a sample of `capacity` keeps from a stream of `n` items.
std::vector<std::uint64_t> keptOf(std::uint64_t n, std::size_t capacity)
{
    StrideSample<int> s(capacity);
    for (std::uint64_t i = 0; i < n; ++i)
        if (s.wants(i))
            s.add(i, 0);
    std::vector<std::uint64_t> out;
    for (const auto &k : s.kept())
        out.push_back(k.first);
    return out;
}

} // namespace

TEST_CASE("a stream no longer than the capacity is kept whole", "[sample]")
{
    CHECK(keptOf(5, 5) == std::vector<std::uint64_t>{0, 1, 2, 3, 4});
    CHECK(keptOf(0, 5).empty());
}

TEST_CASE("a longer stream keeps every stride-th item, over all of it", "[sample]")
{
    // 100 items, at most 10: the stride doubles to 16.
    CHECK(keptOf(100, 10) == std::vector<std::uint64_t>{0, 16, 32, 48, 64, 80, 96});
    // 6 items, at most 5: stride 2.
    CHECK(keptOf(6, 5) == std::vector<std::uint64_t>{0, 2, 4});
}

TEST_CASE("the sample stays within its capacity and reaches the stream's end", "[sample]")
{
    for (std::uint64_t n : {1u, 7u, 1000u, 100000u}) {
        for (std::size_t cap : {1u, 3u, 64u, 5000u}) {
            StrideSample<std::uint64_t> s(cap);
            for (std::uint64_t i = 0; i < n; ++i)
                if (s.wants(i))
                    s.add(i, i * 3);
            INFO("n " << n << ", capacity " << cap);
            REQUIRE_FALSE(s.kept().empty());
            CHECK(s.kept().size() <= cap);
            // Spread: the last item kept is within one stride of the end.
            CHECK(s.kept().back().first + s.stride() >= n);
            CHECK(s.kept().front().first == 0);
            for (const auto &[i, v] : s.kept()) {
                CHECK(i % s.stride() == 0);
                CHECK(v == i * 3); // each value stays with its index
            }
        }
    }
}
