#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "probes/readers/cedt.h"

using namespace daxprobe;

namespace
{

// Builds a CEDT from the ACPI/CXL 2.0 layout (CXL 2.0 section 9.14.1): the
// 36-byte header, then CHBS (type 0, 32 bytes) and CFMWS (type 1, 36 bytes
// and 4 per interleave target) structures.
struct CedtBuilder {
    std::string b = std::string(36, '\0');

    template <typename T> void put(std::size_t off, T v) { std::memcpy(&b[off], &v, sizeof v); }
    CedtBuilder &chbs(std::uint32_t uid, std::uint64_t base)
    {
        std::size_t o = b.size();
        b.resize(o + 32);
        put<std::uint8_t>(o, 0);
        put<std::uint16_t>(o + 2, 32);
        put<std::uint32_t>(o + 4, uid);
        put<std::uint32_t>(o + 8, 1); // CXL 2.0
        put<std::uint64_t>(o + 16, base);
        put<std::uint64_t>(o + 24, 0x10000);
        return *this;
    }
    CedtBuilder &cfmws(std::uint64_t base, std::uint64_t size, std::uint8_t eniw,
                       std::uint32_t hbig, std::uint16_t restrictions,
                       const std::vector<std::uint32_t> &targets)
    {
        std::size_t o = b.size();
        b.resize(o + 36 + 4 * targets.size());
        put<std::uint8_t>(o, 1);
        put<std::uint16_t>(o + 2, static_cast<std::uint16_t>(36 + 4 * targets.size()));
        put<std::uint64_t>(o + 8, base);
        put<std::uint64_t>(o + 16, size);
        put<std::uint8_t>(o + 24, eniw);
        put<std::uint32_t>(o + 28, hbig);
        put<std::uint16_t>(o + 32, restrictions);
        for (std::size_t i = 0; i < targets.size(); ++i)
            put<std::uint32_t>(o + 36 + 4 * i, targets[i]);
        return *this;
    }
    std::string table()
    {
        std::memcpy(&b[0], "CEDT", 4);
        put<std::uint32_t>(4, static_cast<std::uint32_t>(b.size()));
        b[8] = 1;
        std::memcpy(&b[10], "BOCHS ", 6);
        fixChecksum(b);
        return b;
    }
    static void fixChecksum(std::string &t)
    {
        t[9] = 0;
        unsigned char sum = 0;
        for (char c : t)
            sum = static_cast<unsigned char>(sum + static_cast<unsigned char>(c));
        t[9] = static_cast<char>(-sum);
    }
};

// QEMU 7.2's, for the test bed's two host bridges (pxb-cxl bus_nr 12 and
// 13) and one 4 GiB window each, every restriction bit but "fixed" set.
std::string qemuLikeCedt()
{
    return CedtBuilder()
        .chbs(12, 0x10000000000ULL)
        .chbs(13, 0x10000010000ULL)
        .cfmws(0x490000000ULL, 4ULL << 30, 0, 0, 0x0f, {12})
        .cfmws(0x590000000ULL, 4ULL << 30, 0, 0, 0x0f, {13})
        .table();
}

} // namespace

TEST_CASE("a well-formed CEDT is decoded", "[parser][cedt]")
{
    CedtInfo c = parseCedt(qemuLikeCedt());
    CHECK(c.present);
    CHECK(c.problems.empty());
    CHECK(c.checksumOk);
    CHECK(c.length == 36 + 2 * 32 + 2 * 40);
    REQUIRE(c.hostBridges.size() == 2);
    CHECK(c.hostBridges[0].uid == 12);
    CHECK(c.hostBridges[0].cxlVersion == 1);
    CHECK(c.hostBridges[0].base == 0x10000000000ULL);
    CHECK(c.hostBridges[0].length == 0x10000);
    CHECK(c.hostBridges[1].uid == 13);
    REQUIRE(c.windows.size() == 2);
    CHECK(c.windows[0].base == 0x490000000ULL);
    CHECK(c.windows[0].size == 4ULL << 30);
    CHECK(c.windows[0].interleaveWays == 1);
    CHECK(c.windows[0].granularity == 256);
    CHECK(c.windows[0].targets == std::vector<std::uint32_t>{12});
    CHECK(c.windows[1].targets == std::vector<std::uint32_t>{13});
    CHECK(c.windows[0].restrictionNames() ==
          std::vector<std::string>{"type2", "type3", "volatile", "pmem"});
    CHECK(c.pmemWindow());
}

TEST_CASE("CFMWS interleave and restriction encodings", "[parser][cedt]")
{
    SECTION("modulo-3 ways and a larger granularity")
    {
        auto c = parseCedt(
            CedtBuilder().cfmws(0, 768ULL << 20, 8, 2, 0x12, {1, 2, 3}).table()); // 3 ways, 1K
        REQUIRE(c.windows.size() == 1);
        CHECK(c.problems.empty());
        CHECK(c.windows[0].interleaveWays == 3);
        CHECK(c.windows[0].granularity == 1024);
        CHECK(c.windows[0].targets == std::vector<std::uint32_t>{1, 2, 3});
        CHECK(c.windows[0].restrictionNames() == std::vector<std::string>{"type3", "fixed"});
        CHECK_FALSE(c.pmemWindow());
    }
    SECTION("a volatile-only window is no pmem")
    {
        auto c = parseCedt(CedtBuilder().cfmws(0, 256ULL << 20, 0, 0, 0x06, {1}).table());
        CHECK_FALSE(c.pmemWindow());
    }
    SECTION("invalid encodings and alignment are problems, as the kernel skips such windows")
    {
        auto c = parseCedt(CedtBuilder().cfmws(0x1000, 256ULL << 20, 5, 7, 0x08, {}).table());
        CHECK(c.problems.size() == 3);
        CHECK_THAT(c.problems[0], Catch::Contains("interleave ways encoding 5"));
        CHECK_THAT(c.problems[1], Catch::Contains("granularity encoding 7"));
        CHECK_THAT(c.problems[2], Catch::Contains("256 MiB aligned"));
    }
}

TEST_CASE("a damaged CEDT says what is wrong and never reads past the end", "[parser][cedt]")
{
    std::string good = qemuLikeCedt();

    SECTION("bad checksum: still decoded, as evidence")
    {
        std::string b = good;
        b[20] ^= 1;
        CedtInfo c = parseCedt(b);
        CHECK_FALSE(c.checksumOk);
        CHECK(c.problems == std::vector<std::string>{"checksum does not add up to zero"});
        CHECK(c.windows.size() == 2);
    }
    SECTION("truncated anywhere")
    {
        for (std::size_t len = 0; len < good.size(); ++len) {
            CedtInfo c = parseCedt(good.substr(0, len));
            INFO(len);
            CHECK_FALSE(c.problems.empty());
            CHECK(c.hostBridges.size() + c.windows.size() < 4);
        }
    }
    SECTION("wrong signature")
    {
        std::string b = good;
        b[0] = 'N';
        CedtBuilder::fixChecksum(b);
        CHECK_THAT(parseCedt(b).problems.front(), Catch::Contains("not CEDT"));
    }
    SECTION("a sub-table length of zero, below its header, or past the end")
    {
        for (std::uint16_t len : {std::uint16_t{0}, std::uint16_t{3}, std::uint16_t{0xffff}}) {
            std::string b = good;
            std::memcpy(&b[36 + 2], &len, 2);
            CedtBuilder::fixChecksum(b);
            CedtInfo c = parseCedt(b);
            CHECK_THAT(c.problems.back(), Catch::Contains("bad length"));
            CHECK(c.hostBridges.empty());
        }
    }
    SECTION("a CHBS or CFMWS shorter than its structure")
    {
        std::string h = CedtBuilder().chbs(1, 0).table();
        std::uint16_t eight = 8;
        std::memcpy(&h[36 + 2], &eight, 2);
        CedtBuilder::fixChecksum(h);
        CedtInfo c = parseCedt(h);
        CHECK(c.hostBridges.empty());
        CHECK_THAT(c.problems.front(), Catch::Contains("CHBS at offset 36 is 8 bytes"));
        std::string b = CedtBuilder().cfmws(0, 256ULL << 20, 1, 0, 0x08, {7}).table();
        // Two ways, but the record holds one target.
        CedtInfo w = parseCedt(b);
        CHECK(w.windows.empty());
        CHECK_THAT(w.problems.back(), Catch::Contains("2 ways but room for 1 targets"));
    }
    SECTION("the header claims more than was read")
    {
        std::string b = good;
        std::uint32_t len = 4096;
        std::memcpy(&b[4], &len, 4);
        CedtBuilder::fixChecksum(b);
        CedtInfo c = parseCedt(b);
        CHECK_THAT(c.problems.front(), Catch::Contains("header length 4096"));
        CHECK(c.windows.size() == 2);
    }
}
