#include "base/text_escape.h"

#include <algorithm>

namespace daxprobe
{

std::size_t utf8SequenceLength(std::string_view s, std::size_t i)
{
    auto u = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
    unsigned char c = u(0);
    std::size_t n = c < 0x80                 ? 1
                    : c >= 0xC2 && c <= 0xDF ? 2
                    : c >= 0xE0 && c <= 0xEF ? 3
                    : c >= 0xF0 && c <= 0xF4 ? 4
                                             : 0;
    if (n == 0 || i + n > s.size())
        return 0;
    for (std::size_t k = 1; k < n; ++k)
        if ((u(k) & 0xC0) != 0x80)
            return 0;
    if ((c == 0xE0 && u(1) < 0xA0) || (c == 0xED && u(1) >= 0xA0) || (c == 0xF0 && u(1) < 0x90) ||
        (c == 0xF4 && u(1) >= 0x90))
        return 0; // overlong, surrogate, past U+10FFFF
    return n;
}

namespace
{

void appendHexEscape(std::string &out, unsigned char c)
{
    static constexpr char kHex[] = "0123456789abcdef";
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 0xf];
}

// C0, DEL and C1 (U+0080-U+009F, encoded C2 80..C2 9F).
bool isControl(std::string_view seq)
{
    auto c = static_cast<unsigned char>(seq[0]);
    return c < 0x20 || c == 0x7F ||
           (seq.size() == 2 && c == 0xC2 && static_cast<unsigned char>(seq[1]) < 0xA0);
}

// U+061C, U+200E/F, U+202A-E, U+2066-9: they reorder what follows on the
// terminal, so a name could show as another (or hide a part of itself).
bool isBidiControl(std::string_view seq)
{
    auto u = [&](std::size_t k) { return static_cast<unsigned char>(seq[k]); };
    if (seq.size() == 2)
        return u(0) == 0xD8 && u(1) == 0x9C;
    if (seq.size() != 3 || u(0) != 0xE2)
        return false;
    return (u(1) == 0x80 && (u(2) == 0x8E || u(2) == 0x8F || (u(2) >= 0xAA && u(2) <= 0xAE))) ||
           (u(1) == 0x81 && u(2) >= 0xA6 && u(2) <= 0xA9);
}

// The one walk over untrusted bytes: each byte that is not valid UTF-8
// becomes \xNN; each valid sequence goes through `onSequence`.
template <typename OnSequence>
std::string escapeInvalidUtf8(std::string_view s, OnSequence onSequence)
{
    std::string out;
    out.reserve(s.size() + 8);
    for (std::size_t i = 0; i < s.size();) {
        std::size_t n = utf8SequenceLength(s, i);
        if (n == 0) {
            appendHexEscape(out, static_cast<unsigned char>(s[i]));
            ++i;
            continue;
        }
        onSequence(out, s.substr(i, n));
        i += n;
    }
    return out;
}

} // namespace

std::string printable(std::string_view s)
{
    if (std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7f && c != '\\'; }))
        return std::string(s); // the common case: nothing to escape
    return escapeInvalidUtf8(s, [](std::string &out, std::string_view seq) {
        if (isControl(seq) || isBidiControl(seq))
            for (char c : seq)
                appendHexEscape(out, static_cast<unsigned char>(c));
        else if (seq == "\\")
            out += "\\\\";
        else
            out.append(seq);
    });
}

std::string utf8Escaped(std::string_view s)
{
    return escapeInvalidUtf8(s, [](std::string &out, std::string_view seq) { out.append(seq); });
}

} // namespace daxprobe
