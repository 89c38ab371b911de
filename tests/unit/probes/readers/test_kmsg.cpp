#include <cctype>
#include <string>
#include <string_view>

#include <catch2/catch.hpp>

#include "probes/readers/kmsg.h"

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

TEST_CASE("the CXL drivers' refusals are kept", "[parser][kmsg][cxl]")
{
    KmsgRecord r;
    for (const char *line :
         {"3,900,9000000,-;cxl_pci 0000:0d:00.0: Failed to get interrupt for event Info log",
          "3,901,9000001,-;cxl region0: Failed to synchronize CPU cache state"}) {
        REQUIRE(parseKmsgRecord(line, r));
        CHECK(isDaxRelevant(r));
    }
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

TEST_CASE("DAX-relevant records are found as a lowered search would find them", "[parser][kmsg]")
{
    // The reference: a lowered copy searched for each word.
    auto reference = [](std::string_view m) {
        std::string lower(m);
        for (char &c : lower)
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        for (const char *w : {"dax", "pmem", "nfit", "nvdimm", "libnvdimm"})
            if (lower.find(w) != std::string::npos)
                return true;
        return false;
    };
    const char *lines[] = {
        "XFS (pmem0): DAX unsupported by block device. Turning off DAX.",
        "EXT4-fs (pmem0): mounted filesystem with ordered data mode",
        "nd_pmem namespace0.0: unable to guarantee persistence of writes",
        "ACPI: NFIT 0x000000007FFE0F25 0000E0 (v01 BOCHS  BXPC)",
        "libnvdimm: module loaded",
        "Linux version 6.1.0-57-amd64 (debian-kernel@lists.debian.org)",
        "virtio_pmem virtio1: failed to register",
        "EXT4-fs (vda): mounted filesystem",
        "d",
        "da",
        "DA",
        "pme",
        "nfi",
        "nvdim",
        "xda",
        "Dax",
        "dAx",
        "PMem",
        "NvDiMm",
    };
    for (std::string_view line : lines) {
        // Every prefix: a word cut at the end of the message must not match
        // (nor be read past the end).
        for (std::size_t n = 0; n <= line.size(); ++n) {
            KmsgRecord r;
            r.message = std::string(line.substr(0, n));
            INFO(r.message);
            CHECK(isDaxRelevant(r) == reference(r.message));
        }
    }
}
