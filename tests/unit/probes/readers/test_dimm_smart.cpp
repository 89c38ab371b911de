// The SMART reading of a DIMM's health through libndctl (issue 36). The
// payloads themselves are compared with `ndctl list -DH` in the nfit-test
// guest (tests/vm/nfit_checks.py); here what needs no DIMM.
#include <catch2/catch.hpp>

#include "probes/readers/dimm_smart.h"

using namespace daxprobe;

TEST_CASE("smart: temperatures and health states as ndctl decodes them", "[dimm][smart]")
{
    CHECK(decodeSmartTemperature(23 * 16) == 23.0);
    CHECK(decodeSmartTemperature(0x8000u | (5 * 16 + 8)) == -5.5);
    CHECK(decodeSmartTemperature(0) == 0.0);
    CHECK(smartHealthState(0) == "ok");
    CHECK(smartHealthState(1) == "non-critical");
    CHECK(smartHealthState(2) == "critical");
    CHECK(smartHealthState(4 | 1) == "fatal");
}

TEST_CASE("smart: no libndctl is said once, each DIMM's health a short failure", "[dimm][smart]")
{
    std::vector<NdDimm> dimms(2);
    dimms[0].dev = "nmem0";
    dimms[1].dev = "nmem1";
    auto missing = readDimmHealth(dimms, "libndctl-not-there.so.6");
    // The loader's words once, for the report's missing_libraries (issue 44:
    // libguestfs's appliance printed the raw dlopen error twice per DIMM).
    REQUIRE(missing);
    CHECK(missing->soname == "libndctl-not-there.so.6");
    CHECK_THAT(missing->error, Catch::Contains("dlopen libndctl-not-there.so.6"));
    CHECK_THAT(missing->unknown, Catch::Contains("SMART health"));
    for (const auto &d : dimms) {
        CHECK(d.health.failed());
        CHECK(d.health.text == "not read: libndctl-not-there.so.6 could not be loaded");
        CHECK(!d.health.healthState);
    }
    std::vector<NdDimm> none;
    // nothing to ask: nothing loaded, nothing missing
    CHECK_FALSE(readDimmHealth(none, "libndctl-not-there.so.6"));
    CHECK(none.empty());
}

TEST_CASE("smart: a DIMM libndctl does not list is not given a health", "[dimm][smart]")
{
    std::vector<NdDimm> dimms(1);
    dimms[0].dev = "nmem-not-on-this-machine";
    readDimmHealth(dimms);
    CHECK(dimms[0].health.failed());
    CHECK(!dimms[0].health.shutdownCount);
}
