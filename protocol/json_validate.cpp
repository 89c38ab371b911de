// validateJson: the one pass that decides whether a guest's line is JSON.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <locale.h>
#include <string>

#include "base/text_escape.h"
#include "protocol/json_chars.h"
#include "protocol/json_text.h"

namespace daxprobe::protocol
{

namespace
{

using namespace json_chars;

constexpr std::size_t kDepthCap = 1024;

// numbers with strtod (and the locale's decimal point, which it substitutes).
bool finiteDouble(const unsigned char *p, std::size_t n)
{
    static locale_t c = newlocale(LC_ALL_MASK, "C", nullptr);
    char small[64];
    std::string big;
    char *s = small;
    if (n < sizeof small) {
        std::copy(p, p + n, small);
        small[n] = '\0';
    } else {
        big.assign(reinterpret_cast<const char *>(p), n);
        s = big.data();
    }
    return std::isfinite(strtod_l(s, nullptr, c));
}

// Recursive descent over the grammar; depth is bounded by maxDepth (<= kDepthCap).
class Validator
{
  public:
    Validator(std::string_view t, std::size_t maxDepth, JsonSpans *spans)
        : begin_(reinterpret_cast<const unsigned char *>(t.data())), p_(begin_),
          end_(begin_ + t.size()), maxDepth_(std::min(maxDepth, kDepthCap)), spans_(spans)
    {
    }

    void skipWs()
    {
        while (p_ < end_ && isWs(*p_))
            ++p_;
    }
    std::size_t pos() const { return static_cast<std::size_t>(p_ - begin_); }
    bool atEnd() const { return p_ == end_; }
    const char *what() const { return what_; }
    bool tooDeep() const { return tooDeep_; }

    bool value(std::size_t depth)
    {
        skipWs();
        if (p_ == end_)
            return fail("unexpected end of input");
        switch (*p_) {
        case '{':
            return object(depth + 1);
        case '[':
            return array(depth + 1);
        case '"':
            return string();
        case 't':
            return literal("true");
        case 'f':
            return literal("false");
        case 'n':
            return literal("null");
        default:
            if (*p_ == '-' || isDigit(*p_))
                return number();
            return fail("unexpected character");
        }
    }

  private:
    bool fail(const char *what)
    {
        what_ = what;
        return false;
    }

    bool enter(std::size_t depth)
    {
        if (depth <= maxDepth_)
            return true;
        tooDeep_ = true;
        return fail("nested too deep");
    }

    // Records where the container opening at p_ ends (JsonSpans).
    std::size_t openSpan()
    {
        return spans_ ? spans_->open(reinterpret_cast<const char *>(p_)) : JsonSpans::kNone;
    }
    bool closeSpan(std::size_t slot)
    {
        ++p_; // the closing bracket
        if (spans_)
            spans_->close(slot, reinterpret_cast<const char *>(p_));
        return true;
    }

    bool object(std::size_t depth)
    {
        if (!enter(depth))
            return false;
        std::size_t slot = openSpan();
        ++p_;
        skipWs();
        if (p_ < end_ && *p_ == '}')
            return closeSpan(slot);
        for (;;) {
            skipWs();
            if (p_ == end_ || *p_ != '"')
                return fail("expected a string key");
            if (!string())
                return false;
            skipWs();
            if (p_ == end_ || *p_ != ':')
                return fail("expected ':'");
            ++p_;
            if (!value(depth))
                return false;
            skipWs();
            if (p_ == end_)
                return fail("unexpected end of input");
            if (*p_ == '}')
                return closeSpan(slot);
            if (*p_ != ',')
                return fail("expected ',' or '}'");
            ++p_;
        }
    }

    bool array(std::size_t depth)
    {
        if (!enter(depth))
            return false;
        std::size_t slot = openSpan();
        ++p_;
        skipWs();
        if (p_ < end_ && *p_ == ']')
            return closeSpan(slot);
        for (;;) {
            if (!value(depth))
                return false;
            skipWs();
            if (p_ == end_)
                return fail("unexpected end of input");
            if (*p_ == ']')
                return closeSpan(slot);
            if (*p_ != ',')
                return fail("expected ',' or ']'");
            ++p_;
        }
    }

    bool string()
    {
        ++p_; // the opening quote
        while (p_ < end_) {
            p_ = skipPlainAscii(p_, end_);
            if (p_ == end_)
                break;
            unsigned char c = *p_;
            if (c == '"') {
                ++p_;
                return true;
            }
            if (c == '\\') {
                if (!escape())
                    return false;
            } else if (c < 0x20) {
                return fail("control character in a string");
            } else if (c < 0x80) {
                ++p_;
            } else if (!utf8()) {
                return false;
            }
        }
        return fail("unterminated string");
    }

    bool escape()
    {
        if (end_ - p_ < 2)
            return fail("unterminated string");
        switch (p_[1]) {
        case '"':
        case '\\':
        case '/':
        case 'b':
        case 'f':
        case 'n':
        case 'r':
        case 't':
            p_ += 2;
            return true;
        case 'u':
            break;
        default:
            return fail("invalid escape");
        }
        if (end_ - p_ < 6)
            return fail("invalid \\u escape");
        int cp = hex4(p_ + 2);
        if (cp < 0)
            return fail("invalid \\u escape");
        p_ += 6;
        if (cp >= 0xDC00 && cp <= 0xDFFF)
            return fail("low surrogate without a high one");
        if (cp < 0xD800 || cp > 0xDBFF)
            return true;
        if (end_ - p_ < 6 || p_[0] != '\\' || p_[1] != 'u')
            return fail("high surrogate without a low one");
        int lo = hex4(p_ + 2);
        if (lo < 0xDC00 || lo > 0xDFFF)
            return fail("high surrogate without a low one");
        p_ += 6;
        return true;
    }

    // One multi-byte UTF-8 sequence, as RFC 3629 (and nlohmann's lexer) allow it.
    bool utf8()
    {
        std::size_t n = utf8SequenceLength(std::string_view(reinterpret_cast<const char *>(p_),
                                                            static_cast<std::size_t>(end_ - p_)),
                                           0);
        if (n == 0)
            return fail("invalid UTF-8 in a string");
        p_ += n;
        return true;
    }

    bool digits()
    {
        if (p_ == end_ || !isDigit(*p_))
            return fail("expected a digit");
        while (p_ < end_ && isDigit(*p_))
            ++p_;
        return true;
    }

    bool number()
    {
        const unsigned char *start = p_;
        bool integer = true;
        if (*p_ == '-')
            ++p_;
        if (p_ < end_ && *p_ == '0')
            ++p_; // no leading zeros: "01" is "0" followed by garbage
        else if (!digits())
            return false;
        if (p_ < end_ && *p_ == '.') {
            integer = false;
            ++p_;
            if (!digits())
                return false;
        }
        if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
            integer = false;
            ++p_;
            if (p_ < end_ && (*p_ == '+' || *p_ == '-'))
                ++p_;
            if (!digits())
                return false;
        }
        auto n = static_cast<std::size_t>(p_ - start);
        // An integer of up to 300 digits is a finite double; nlohmann refuses
        // numbers that overflow a double ("number overflow"), so must we.
        if (integer && n <= 300)
            return true;
        return finiteDouble(start, n) || fail("number overflows a double");
    }

    bool literal(std::string_view word)
    {
        if (static_cast<std::size_t>(end_ - p_) < word.size() ||
            !std::equal(word.begin(), word.end(), p_))
            return fail("invalid literal");
        p_ += word.size();
        return true;
    }

    const unsigned char *begin_, *p_, *end_;
    std::size_t maxDepth_;
    JsonSpans *spans_;
    const char *what_ = "";
    bool tooDeep_ = false;
};

} // namespace

Result<std::string_view> validateJson(std::string_view text, std::size_t maxDepth, JsonSpans *spans)
{
    if (spans)
        spans->clear();
    std::size_t off = text.starts_with("\xEF\xBB\xBF") ? 3 : 0;
    std::string_view body = text.substr(off);
    Validator v(body, maxDepth, spans);
    v.skipWs();
    std::size_t start = v.pos();
    if (!v.value(0)) {
        if (v.tooDeep())
            return failf(EBADMSG, "message nested more than {} deep (the limit)",
                         std::min(maxDepth, kDepthCap));
        return failf(EBADMSG, "message is not valid JSON: {} at byte {}", v.what(), off + v.pos());
    }
    std::size_t end = v.pos();
    v.skipWs();
    // nlohmann takes a NUL byte for the end of input (for C strings): what
    // follows it is never read, so the value is all that counts. Likewise.
    if (!v.atEnd() && body[v.pos()] != '\0')
        return failf(EBADMSG, "message is not valid JSON: text after the value at byte {}",
                     off + v.pos());
    return body.substr(start, end - start);
}

} // namespace daxprobe::protocol
