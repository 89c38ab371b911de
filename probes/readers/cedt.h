#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace daxprobe
{

// What the ACPI CEDT (CXL Early Discovery Table, CXL 2.0 section 9.14.1)
// says, decoded from the raw table bytes: the CXL host bridges (CHBS) and
// the fixed memory windows the firmware set up for them (CFMWS). As with
// the NFIT, a malformed table is evidence, kept in `problems`.
struct CedtHostBridge {
    std::uint32_t uid = 0;        // the host bridge's _UID (a root decoder's target)
    std::uint32_t cxlVersion = 0; // 0: CXL 1.1 (RCRB), 1: CXL 2.0 (component registers)
    std::uint64_t base = 0;
    std::uint64_t length = 0;
};

// Window Restrictions bits, as ACPI names them (CXL 2.0 table 9-22).
enum CedtRestriction : std::uint16_t {
    kCedtType2 = 1 << 0, // device coherent (accelerators)
    kCedtType3 = 1 << 1, // host-only coherent (memory expanders)
    kCedtVolatile = 1 << 2,
    kCedtPmem = 1 << 3,
    kCedtFixed = 1 << 4, // fixed device configuration
};

struct CedtWindow {
    std::uint64_t base = 0;
    std::uint64_t size = 0;
    unsigned interleaveWays = 0;        // decoded from ENIW; 0 when the encoding is invalid
    std::uint64_t granularity = 0;      // bytes, decoded from HBIG; 0 when invalid
    std::vector<std::uint32_t> targets; // host bridge UIDs, in interleave order
    std::uint16_t restrictions = 0;

    bool pmemCapable() const { return (restrictions & kCedtPmem) != 0; }
    // type2, type3, volatile, pmem, fixed: the bits set, in that order.
    std::vector<std::string> restrictionNames() const;
};

struct CedtInfo {
    bool present = false;     // the table was read
    bool exists = false;      // the file is there, readable or not
    std::string readError;    // why it could not be read (empty when absent or read)
    std::uint32_t length = 0; // from the header
    bool checksumOk = false;
    std::vector<CedtHostBridge> hostBridges;
    std::vector<CedtWindow> windows;
    std::vector<std::string> problems;

    bool pmemWindow() const;
};

CedtInfo parseCedt(std::string_view bytes);

} // namespace daxprobe
