#pragma once

#include <cstdint>
#include <cstring>

// Character classes shared by the JSON text validator and readers.
namespace daxprobe::protocol::json_chars
{

inline bool isWs(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}
inline bool isDigit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

inline int hexDigit(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

// The four hex digits at p (bounds checked by the caller), or -1.
inline int hex4(const unsigned char *p)
{
    int v = 0;
    for (int i = 0; i < 4; ++i) {
        int d = hexDigit(p[i]);
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

// Eight bytes at a time (SWAR): most of a report's bytes are inside strings,
// and a byte at a time was the validator's and readers' largest cost.
namespace swar
{
constexpr std::uint64_t kOnes = 0x0101010101010101ULL, kHighs = 0x8080808080808080ULL;
// High bit set in some byte iff a byte of w equals c (exact as to "some").
inline std::uint64_t hasByte(std::uint64_t w, unsigned char c)
{
    std::uint64_t x = w ^ (kOnes * c);
    return (x - kOnes) & ~x & kHighs;
}
inline std::uint64_t load(const unsigned char *p)
{
    std::uint64_t w;
    std::memcpy(&w, p, sizeof w);
    return w;
}
} // namespace swar

// Past the bytes from p that a JSON string holds as they are: ASCII from
// 0x20 up, but not '"' or '\\'. Stops at the first byte that needs a look.
inline const unsigned char *skipPlainAscii(const unsigned char *p, const unsigned char *end)
{
    using namespace swar;
    while (end - p >= 8) {
        std::uint64_t w = load(p);
        // Below 0x20 borrows into the high bit; 0x80 and up has it set.
        if ((hasByte(w, '"') | hasByte(w, '\\') | ((w - kOnes * 0x20) & kHighs) | (w & kHighs)) !=
            0)
            break;
        p += 8;
    }
    while (p < end && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\')
        ++p;
    return p;
}

// The first '"' or '\\' from p, or end.
inline const unsigned char *findQuoteOrBackslash(const unsigned char *p, const unsigned char *end)
{
    using namespace swar;
    while (end - p >= 8) {
        std::uint64_t w = load(p);
        if ((hasByte(w, '"') | hasByte(w, '\\')) != 0)
            break;
        p += 8;
    }
    while (p < end && *p != '"' && *p != '\\')
        ++p;
    return p;
}

} // namespace daxprobe::protocol::json_chars
