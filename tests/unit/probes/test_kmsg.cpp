#include <catch2/catch.hpp>

#include "kmsg.h"

using namespace daxprobe;

TEST_CASE("kmsg records are parsed with their device", "[parser][kmsg]")
{
    KmsgRecord r;
    REQUIRE(parseKmsgRecord("4,612,4170183,-;XFS (pmem0): DAX unsupported by block device. Turning off DAX.", r));
    CHECK(r.level == 4);
    CHECK(r.seq == 612);
    CHECK(r.usec == 4170183);
    CHECK(r.device == "pmem0");
    CHECK(r.message == "XFS (pmem0): DAX unsupported by block device. Turning off DAX.");
    CHECK(isDaxRelevant(r));

    REQUIRE(parseKmsgRecord("3,700,5000000,-;EXT4-fs (pmem0): DAX unsupported by block device.\n SUBSYSTEM=block", r));
    CHECK(r.device == "pmem0");
    CHECK(r.level == 3);
    CHECK(r.message == "EXT4-fs (pmem0): DAX unsupported by block device.");

    REQUIRE(parseKmsgRecord("6,1,2,c;Linux version 6.1.0", r));
    CHECK(r.device.empty());
    CHECK_FALSE(isDaxRelevant(r));
}

TEST_CASE("lines that are not kmsg records are refused", "[parser][kmsg]")
{
    KmsgRecord r;
    CHECK_FALSE(parseKmsgRecord("", r));
    CHECK_FALSE(parseKmsgRecord(" SUBSYSTEM=block", r));
    CHECK_FALSE(parseKmsgRecord("no semicolon here", r));
    CHECK_FALSE(parseKmsgRecord("6,1;short header", r));
    CHECK_FALSE(parseKmsgRecord("a,b,c,-;letters", r));
}
