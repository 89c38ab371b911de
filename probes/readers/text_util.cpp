#include "probes/readers/text_util.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace daxprobe
{

bool containsNoCase(std::string_view s, std::string_view needle)
{
    auto it = std::search(s.begin(), s.end(), needle.begin(), needle.end(), [](char a, char b) {
        return std::tolower(static_cast<unsigned char>(a)) ==
               std::tolower(static_cast<unsigned char>(b));
    });
    return it != s.end();
}

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

} // namespace daxprobe
