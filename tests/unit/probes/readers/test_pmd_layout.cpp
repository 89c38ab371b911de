#include <catch2/catch.hpp>

#include "probes/readers/pmd_layout.h"

using namespace daxprobe;

TEST_CASE("2 MiB pieces are ready only on 2 MiB-aligned device extents", "[readers][profile]")
{
    constexpr std::uint64_t MiB = 1 << 20;
    // One 32 MiB extent at device byte 1 MiB (dd-written on ext4): no piece.
    PmdLayout off = pmdLayoutOf({{0, 1 * MiB, 32 * MiB, true}}, 32 * MiB);
    CHECK(off.observed);
    CHECK(off.pieces == 16);
    CHECK(off.ready == 0);
    // Allocated whole on 2 MiB stripes: every piece.
    CHECK(pmdLayoutOf({{0, 4 * MiB, 8 * MiB, true}}, 8 * MiB).ready == 4);
    // FIEMAP's split of one contiguous run is still one run.
    CHECK(pmdLayoutOf({{0, 4 * MiB, 3 * MiB, true}, {3 * MiB, 7 * MiB, 5 * MiB, true}}, 8 * MiB)
              .ready == 4);
    // A run starting mid-piece readies only the whole pieces after it; the
    // tail short of 2 MiB never is.
    PmdLayout mid = pmdLayoutOf({{1 * MiB, 3 * MiB, 8 * MiB, true}}, 9 * MiB);
    CHECK(mid.pieces == 5);
    CHECK(mid.ready == 3);
    // An extent without a fixed address (delalloc, inline) readies nothing.
    CHECK(pmdLayoutOf({{0, 4 * MiB, 8 * MiB, false}}, 8 * MiB).ready == 0);
}

TEST_CASE("only nfit_test's bus is known to serve one page at a time", "[readers][profile]")
{
    DeviceFacts d;
    d.provider = "nfit_test.0";
    CHECK(d.servesOnePageAtATime());
    d.provider = "ACPI.NFIT";
    CHECK_FALSE(d.servesOnePageAtATime());
}
