#include <catch2/catch.hpp>

#include "kmsg.h"

using namespace daxprobe;

TEST_CASE("kmsg records are parsed with their device", "[parser][kmsg]")
{
    KmsgRecord r;
    REQUIRE(parseKmsgRecord(
        "4,612,4170183,-;XFS (pmem0): DAX unsupported by block device. Turning off DAX.", r));
    CHECK(r.level == 4);
    CHECK(r.seq == 612);
    CHECK(r.usec == 4170183);
    CHECK(r.device == "pmem0");
    CHECK(r.message == "XFS (pmem0): DAX unsupported by block device. Turning off DAX.");
    CHECK(isDaxRelevant(r));

    REQUIRE(parseKmsgRecord(
        "3,700,5000000,-;EXT4-fs (pmem0): DAX unsupported by block device.\n SUBSYSTEM=block", r));
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

TEST_CASE("syslog(2) lines parse to the same records as /dev/kmsg's", "[parser][kmsg]")
{
    KmsgRecord r;
    REQUIRE(parseSyslogLine(
        "<4>[    4.170183] XFS (pmem0): DAX unsupported by block device. Turning off DAX.", 7, r));
    CHECK(r.level == 4);
    CHECK(r.seq == 7);
    CHECK(r.usec == 4170183);
    CHECK(r.device == "pmem0");
    CHECK(r.message == "XFS (pmem0): DAX unsupported by block device. Turning off DAX.");
    CHECK(isDaxRelevant(r));

    // Facility bits in the priority; no time (printk.time off); a caller id.
    REQUIRE(parseSyslogLine("<14>EXT4-fs (pmem0): mounted filesystem", 0, r));
    CHECK(r.level == 6);
    CHECK(r.usec == 0);
    CHECK(r.device == "pmem0");
    CHECK(r.message == "EXT4-fs (pmem0): mounted filesystem");
    REQUIRE(parseSyslogLine(
        "<6>[    1.000002][    T1] nd_pmem namespace0.0: unable to guarantee persistence", 1, r));
    CHECK(r.usec == 1000002);
    CHECK(r.message == "nd_pmem namespace0.0: unable to guarantee persistence");

    CHECK_FALSE(parseSyslogLine("", 0, r));
    CHECK_FALSE(parseSyslogLine("no priority", 0, r));
    CHECK_FALSE(parseSyslogLine("<x>[ 1.0] letters", 0, r));
    CHECK_FALSE(parseSyslogLine("<6>[ 1.0 unterminated", 0, r));
    CHECK_FALSE(parseSyslogLine("<6>[what] is this", 0, r));
}
