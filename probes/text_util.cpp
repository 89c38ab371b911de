#include "probes/text_util.h"

#include <charconv>

namespace daxprobe
{

std::vector<std::string_view> splitLines(std::string_view text)
{
    std::vector<std::string_view> lines;
    while (!text.empty()) {
        auto nl = text.find('\n');
        if (nl == std::string_view::npos) {
            lines.push_back(text);
            break;
        }
        lines.push_back(text.substr(0, nl));
        text.remove_prefix(nl + 1);
    }
    return lines;
}

std::vector<std::string_view> splitFields(std::string_view line, char sep)
{
    std::vector<std::string_view> fields;
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && (line[i] == sep || (sep == ' ' && line[i] == '\t')))
            ++i;
        if (i >= line.size())
            break;
        std::size_t j = i;
        while (j < line.size() && !(line[j] == sep || (sep == ' ' && line[j] == '\t')))
            ++j;
        fields.push_back(line.substr(i, j - i));
        i = j;
    }
    return fields;
}

std::string_view trim(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n'))
        s.remove_prefix(1);
    while (!s.empty() &&
           (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

namespace
{

// The whole string must be the number: "12kB" or " 12" are not numbers.
template <typename T> std::optional<T> parseWhole(std::string_view s)
{
    T v = 0;
    if (s.empty())
        return std::nullopt;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size())
        return std::nullopt;
    return v;
}

} // namespace

std::optional<std::uint64_t> parseU64(std::string_view s)
{
    return parseWhole<std::uint64_t>(s);
}

std::optional<std::int64_t> parseI64(std::string_view s)
{
    return parseWhole<std::int64_t>(s);
}

std::string shellQuote(std::string_view s)
{
    auto safe = [](unsigned char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               std::string_view("@%+=:,./_-").find(static_cast<char>(c)) != std::string_view::npos;
    };
    bool plain = !s.empty();
    for (unsigned char c : s)
        plain = plain && safe(c);
    if (plain)
        return std::string(s);
    std::string out = "'";
    for (char c : s) {
        if (c == '\'')
            out += "'\"'\"'";
        else
            out += c;
    }
    out += '\'';
    return out;
}

namespace
{

// Length of the valid UTF-8 sequence at s[i] (1-4), or 0 when it is not one.
std::size_t utf8Length(std::string_view s, std::size_t i, std::uint32_t &cp)
{
    auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
    unsigned char c = b(0);
    std::size_t n = c < 0x80           ? 1
                    : (c >> 5) == 0x6  ? 2
                    : (c >> 4) == 0xe  ? 3
                    : (c >> 3) == 0x1e ? 4
                                       : 0;
    if (n == 0 || i + n > s.size())
        return 0;
    cp = n == 1 ? c : c & (0x7f >> n);
    for (std::size_t k = 1; k < n; ++k) {
        if ((b(k) & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (b(k) & 0x3f);
    }
    static constexpr std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0; // overlong, beyond Unicode, or a surrogate
    return n;
}

} // namespace

std::string printable(std::string_view s)
{
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    out.reserve(s.size());
    auto escape = [&](unsigned char c) {
        out += "\\x";
        out += kHex[c >> 4];
        out += kHex[c & 0xf];
    };
    for (std::size_t i = 0; i < s.size();) {
        std::uint32_t cp = 0;
        std::size_t n = utf8Length(s, i, cp);
        if (n == 0) {
            escape(static_cast<unsigned char>(s[i]));
            ++i;
            continue;
        }
        // Bidirectional controls reorder what the terminal shows after them.
        bool bidi = cp == 0x61c || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
                    (cp >= 0x2066 && cp <= 0x2069);
        bool control = cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || bidi;
        if (control)
            for (std::size_t k = 0; k < n; ++k)
                escape(static_cast<unsigned char>(s[i + k]));
        else
            out.append(s.substr(i, n));
        i += n;
    }
    return out;
}

std::string utf8Escaped(std::string_view s)
{
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        std::uint32_t cp = 0;
        std::size_t n = utf8Length(s, i, cp);
        if (n == 0) {
            auto c = static_cast<unsigned char>(s[i]);
            out += "\\x";
            out += kHex[c >> 4];
            out += kHex[c & 0xf];
            ++i;
            continue;
        }
        out.append(s.substr(i, n));
        i += n;
    }
    return out;
}

} // namespace daxprobe
