// The readers of validated JSON text: members, elements, scalars.
#include <algorithm>
#include <charconv>

#include "protocol/json_chars.h"
#include "protocol/json_text.h"

namespace daxprobe::protocol
{

namespace
{

using namespace json_chars;

constexpr std::size_t npos = std::string_view::npos;

std::size_t skipWs(std::string_view t, std::size_t i)
{
    while (i < t.size() && isWs(static_cast<unsigned char>(t[i])))
        ++i;
    return i;
}

// Past the string starting at t[i] == '"', or npos. The text is valid
// JSON: a backslash always starts an escape of at least two bytes, and no
// escape holds a quote after its first two.
std::size_t skipString(std::string_view t, std::size_t i)
{
    auto *base = reinterpret_cast<const unsigned char *>(t.data());
    const unsigned char *end = base + t.size(), *p = base + i + 1;
    while (p < end) {
        p = findQuoteOrBackslash(p, end);
        if (p == end)
            break;
        if (*p == '"')
            return static_cast<std::size_t>(p - base) + 1;
        if (end - p < 2)
            break;
        p += 2;
    }
    return npos;
}

// Past the value starting at t[i] (no whitespace before it), or npos.
std::size_t skipValue(std::string_view t, std::size_t i, const JsonSpans *spans)
{
    if (i >= t.size())
        return npos;
    if (t[i] == '"')
        return skipString(t, i);
    if (t[i] == '{' || t[i] == '[') {
        if (const char *end = spans ? spans->endOf(t.data() + i) : nullptr;
            end && end <= t.data() + t.size())
            return static_cast<std::size_t>(end - t.data());
        std::size_t depth = 0;
        while (i < t.size()) {
            char c = t[i];
            if (c == '"') {
                i = skipString(t, i);
                if (i == npos)
                    return npos;
                continue;
            }
            if (c == '{' || c == '[')
                ++depth;
            else if ((c == '}' || c == ']') && --depth == 0)
                return i + 1;
            ++i;
        }
        return npos;
    }
    std::size_t start = i;
    while (i < t.size() && !isWs(static_cast<unsigned char>(t[i])) && t[i] != ',' && t[i] != '}' &&
           t[i] != ']')
        ++i;
    return i > start ? i : npos;
}

void appendUtf8(std::string &out, std::uint32_t cp)
{
    if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
}

// raw: a whole string token, quotes included.
bool decodeString(std::string_view raw, std::string &out)
{
    out.clear();
    if (raw.size() < 2 || raw.front() != '"' || raw.back() != '"')
        return false;
    std::string_view body = raw.substr(1, raw.size() - 2);
    if (body.find('\\') == npos) {
        out.assign(body);
        return true;
    }
    auto u = [&](std::size_t i) {
        return i + 6 <= body.size() && body[i] == '\\' && body[i + 1] == 'u'
                   ? hex4(reinterpret_cast<const unsigned char *>(body.data() + i + 2))
                   : -1;
    };
    for (std::size_t i = 0; i < body.size(); ++i) {
        if (body[i] != '\\') {
            out.push_back(body[i]);
            continue;
        }
        if (i + 1 >= body.size())
            return false;
        switch (body[i + 1]) {
        case '"':
        case '\\':
        case '/':
            out.push_back(body[i + 1]);
            break;
        case 'b':
            out.push_back('\b');
            break;
        case 'f':
            out.push_back('\f');
            break;
        case 'n':
            out.push_back('\n');
            break;
        case 'r':
            out.push_back('\r');
            break;
        case 't':
            out.push_back('\t');
            break;
        case 'u': {
            int cp = u(i);
            if (cp < 0 || (cp >= 0xDC00 && cp <= 0xDFFF))
                return false;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                int lo = u(i + 6);
                if (lo < 0xDC00 || lo > 0xDFFF)
                    return false;
                appendUtf8(out, 0x10000 + ((static_cast<std::uint32_t>(cp) - 0xD800) << 10) +
                                    (static_cast<std::uint32_t>(lo) - 0xDC00));
                i += 6;
            } else {
                appendUtf8(out, static_cast<std::uint32_t>(cp));
            }
            i += 4;
            break;
        }
        default:
            return false;
        }
        ++i;
    }
    return true;
}

} // namespace

std::size_t JsonSpans::open(const char *at)
{
    if (spans_.size() >= kMaxSpans)
        return kNone;
    spans_.push_back({at, nullptr});
    return spans_.size() - 1;
}

void JsonSpans::close(std::size_t slot, const char *end)
{
    if (slot != kNone)
        spans_[slot].end = end;
}

const char *JsonSpans::endOf(const char *at) const
{
    auto it = std::lower_bound(spans_.begin(), spans_.end(), at,
                               [](const Span &s, const char *p) { return s.begin < p; });
    return it != spans_.end() && it->begin == at ? it->end : nullptr;
}

JsonObjectReader::JsonObjectReader(std::string_view object, const JsonSpans *spans)
    : text_(object), spans_(spans)
{
    pos_ = skipWs(text_, 0);
    ok_ = pos_ < text_.size() && text_[pos_] == '{';
    ++pos_;
}

bool JsonObjectReader::next(std::string &key, std::string_view &value)
{
    if (!ok_)
        return false;
    pos_ = skipWs(text_, pos_);
    if (pos_ < text_.size() && text_[pos_] == ',')
        pos_ = skipWs(text_, pos_ + 1);
    ok_ = false; // until this member is read whole
    if (pos_ >= text_.size() || text_[pos_] != '"')
        return false;
    std::size_t keyEnd = skipString(text_, pos_);
    if (keyEnd == npos || !decodeString(text_.substr(pos_, keyEnd - pos_), key))
        return false;
    pos_ = skipWs(text_, keyEnd);
    if (pos_ >= text_.size() || text_[pos_] != ':')
        return false;
    pos_ = skipWs(text_, pos_ + 1);
    std::size_t valueEnd = skipValue(text_, pos_, spans_);
    if (valueEnd == npos)
        return false;
    value = text_.substr(pos_, valueEnd - pos_);
    pos_ = valueEnd;
    ok_ = true;
    return true;
}

JsonArrayReader::JsonArrayReader(std::string_view array, const JsonSpans *spans)
    : text_(array), spans_(spans)
{
    pos_ = skipWs(text_, 0);
    ok_ = pos_ < text_.size() && text_[pos_] == '[';
    ++pos_;
}

bool JsonArrayReader::next(std::string_view &element)
{
    if (!ok_)
        return false;
    pos_ = skipWs(text_, pos_);
    if (pos_ < text_.size() && text_[pos_] == ',')
        pos_ = skipWs(text_, pos_ + 1);
    ok_ = false;
    if (pos_ >= text_.size() || text_[pos_] == ']')
        return false;
    std::size_t end = skipValue(text_, pos_, spans_);
    if (end == npos)
        return false;
    element = text_.substr(pos_, end - pos_);
    pos_ = end;
    ok_ = true;
    return true;
}

std::optional<std::string> jsonString(std::string_view value)
{
    if (value.empty() || value.front() != '"' || skipString(value, 0) != value.size())
        return std::nullopt;
    std::string out;
    if (!decodeString(value, out))
        return std::nullopt;
    return out;
}

std::optional<std::uint64_t> jsonUnsigned(std::string_view value)
{
    if (value.empty() || (value.size() > 1 && value.front() == '0') ||
        !std::all_of(value.begin(), value.end(), [](char c) { return isDigit(c); }))
        return std::nullopt;
    std::uint64_t v = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || end != value.data() + value.size())
        return std::nullopt; // beyond UINT64_MAX: a DOM holds it as a double
    return v;
}

bool jsonIsObject(std::string_view value)
{
    return !value.empty() && value.front() == '{';
}
bool jsonIsNull(std::string_view value)
{
    return value == "null";
}

} // namespace daxprobe::protocol
