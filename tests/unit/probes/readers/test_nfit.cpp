#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <string>

#include "probes/readers/nfit.h"

using namespace daxprobe;

namespace
{

void put16(std::string &b, std::size_t off, std::uint16_t v)
{
    std::memcpy(&b[off], &v, 2);
}
void put32(std::string &b, std::size_t off, std::uint32_t v)
{
    std::memcpy(&b[off], &v, 4);
}
void put64(std::string &b, std::size_t off, std::uint64_t v)
{
    std::memcpy(&b[off], &v, 8);
}

void fixChecksum(std::string &b)
{
    b[9] = 0;
    unsigned char sum = 0;
    for (char c : b)
        sum = static_cast<unsigned char>(sum + static_cast<unsigned char>(c));
    b[9] = static_cast<char>(-sum);
}

// A table shaped like QEMU's: header, 4 reserved bytes, one pmem SPA range,
// one memdev, then a platform-capabilities structure.
std::string qemuLikeNfit()
{
    std::string b(40 + 56 + 48 + 16, '\0');
    std::memcpy(&b[0], "NFIT", 4);
    put32(b, 4, static_cast<std::uint32_t>(b.size()));
    b[8] = 1;
    std::memcpy(&b[10], "BOCHS ", 6);
    std::size_t spa = 40;
    put16(b, spa, 0);
    put16(b, spa + 2, 56);
    put16(b, spa + 4, 2);
    const unsigned char pmem[16] = {0x79, 0xd3, 0xf0, 0x66, 0xf3, 0xb4, 0x74, 0x40,
                                    0xac, 0x43, 0x0d, 0x33, 0x18, 0xb7, 0x8c, 0xdb};
    std::memcpy(&b[spa + 16], pmem, 16);
    put64(b, spa + 32, 0x140000000ULL);
    put64(b, spa + 40, 512ULL << 20);
    std::size_t memdev = spa + 56;
    put16(b, memdev, 1);
    put16(b, memdev + 2, 48);
    std::size_t caps = memdev + 48;
    put16(b, caps, 7);
    put16(b, caps + 2, 16);
    put32(b, caps + 8, 0x2);
    fixChecksum(b);
    return b;
}

} // namespace

TEST_CASE("a well-formed NFIT is decoded", "[parser][nfit]")
{
    NfitInfo n = parseNfit(qemuLikeNfit());
    CHECK(n.present);
    CHECK(n.valid());
    CHECK(n.signature == "NFIT");
    CHECK(n.checksumOk);
    CHECK(n.oemId == "BOCHS");
    REQUIRE(n.spaRanges.size() == 1);
    CHECK(n.spaRanges[0].type == "pmem");
    CHECK(n.spaRanges[0].index == 2);
    CHECK(n.spaRanges[0].base == 0x140000000ULL);
    CHECK(n.spaRanges[0].length == 512ULL << 20);
    CHECK(n.pmemRangeCount() == 1);
    CHECK(n.memdevCount == 1);
    REQUIRE(n.platformCapabilities);
    CHECK(*n.platformCapabilities == 0x2);
}

TEST_CASE("a damaged NFIT says what is wrong and never reads past the end", "[parser][nfit]")
{
    std::string good = qemuLikeNfit();

    SECTION("bad checksum")
    {
        std::string b = good;
        b[20] ^= 1;
        NfitInfo n = parseNfit(b);
        CHECK_FALSE(n.checksumOk);
        CHECK_FALSE(n.valid());
        CHECK(n.spaRanges.size() == 1); // still decoded: evidence, not a crash
    }
    SECTION("truncated")
    {
        for (std::size_t len : {0u, 10u, 35u, 36u, 50u, 100u, 150u}) {
            NfitInfo n = parseNfit(good.substr(0, len));
            CHECK_FALSE(n.valid());
            CHECK_FALSE(n.problems.empty());
        }
    }
    SECTION("wrong signature")
    {
        std::string b = good;
        b[0] = 'X';
        fixChecksum(b);
        NfitInfo n = parseNfit(b);
        CHECK_FALSE(n.valid());
        CHECK_THAT(n.problems.front(), Catch::Contains("signature"));
    }
    SECTION("sub-table length zero or too long")
    {
        for (std::uint16_t len : {std::uint16_t{0}, std::uint16_t{3}, std::uint16_t{0xffff}}) {
            std::string b = good;
            put16(b, 42, len);
            fixChecksum(b);
            NfitInfo n = parseNfit(b);
            CHECK_FALSE(n.valid());
            CHECK(n.spaRanges.empty());
        }
    }
    SECTION("header claims more than was read")
    {
        std::string b = good;
        put32(b, 4, 4096);
        fixChecksum(b);
        NfitInfo n = parseNfit(b);
        CHECK_FALSE(n.valid());
        CHECK(n.spaRanges.size() == 1);
    }
    SECTION("unknown range type is shown as a GUID")
    {
        std::string b = good;
        b[40 + 16] = 0x00;
        fixChecksum(b);
        NfitInfo n = parseNfit(b);
        REQUIRE(n.spaRanges.size() == 1);
        CHECK(n.spaRanges[0].type == "66f0d300-b4f3-4074-ac43-0d3318b78cdb");
        CHECK(n.pmemRangeCount() == 0);
    }
}

TEST_CASE("a table too short for the NFIT's reserved bytes is not a valid NFIT", "[nfit]")
{
    // Found by the fuzz target's invariant (tests/fuzz/corpus/nfit/regression-36-byte-table):
    // an ACPI header alone, signature, length and checksum all correct.
    for (std::size_t size : {36u, 39u}) {
        std::string b(size, '\0');
        std::memcpy(&b[0], "NFIT", 4);
        put32(b, 4, static_cast<std::uint32_t>(size));
        fixChecksum(b);
        NfitInfo n = parseNfit(b);
        INFO(size);
        CHECK(n.checksumOk);
        CHECK_FALSE(n.valid());
        REQUIRE(n.problems.size() == 1);
        CHECK(n.problems[0].find("shorter than an NFIT header") != std::string::npos);
    }
    // 40 bytes (header and reserved, no sub-table) is a valid, empty table.
    std::string b(40, '\0');
    std::memcpy(&b[0], "NFIT", 4);
    put32(b, 4, 40);
    fixChecksum(b);
    CHECK(parseNfit(b).valid());
}
