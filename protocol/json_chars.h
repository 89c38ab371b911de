#pragma once

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

} // namespace daxprobe::protocol::json_chars
