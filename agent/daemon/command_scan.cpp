#include "agent/daemon/command_scan.h"

namespace daxprobe
{

namespace
{

class Scanner
{
  public:
    explicit Scanner(std::string_view s) : s_(s) {}

    void ws()
    {
        while (i_ < s_.size() &&
               (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\r' || s_[i_] == '\n'))
            ++i_;
    }
    bool eat(char c)
    {
        ws();
        if (i_ < s_.size() && s_[i_] == c) {
            ++i_;
            return true;
        }
        return false;
    }
    bool atEnd()
    {
        ws();
        return i_ == s_.size();
    }
    // A string of characters for which ok(c) holds: no escapes, no
    // non-ASCII, so its JSON text and its dump are the same bytes.
    template <typename Ok> std::optional<std::string_view> plainString(Ok ok, std::size_t maxLen)
    {
        if (!eat('"'))
            return std::nullopt;
        std::size_t start = i_;
        while (i_ < s_.size() && s_[i_] != '"') {
            if (!ok(s_[i_]) || i_ - start >= maxLen)
                return std::nullopt;
            ++i_;
        }
        if (i_ == s_.size())
            return std::nullopt;
        ++i_; // the closing quote
        return s_.substr(start, i_ - 1 - start);
    }
    // Text of the next literal if it is `word`.
    bool literal(std::string_view word)
    {
        ws();
        if (s_.substr(i_, word.size()) != word)
            return false;
        i_ += word.size();
        return true;
    }
    // An integer whose dump is its own text: no leading zeros, no "-0", no
    // fraction or exponent, at most 15 digits (exact in any JSON number type).
    std::optional<std::string_view> integer()
    {
        ws();
        std::size_t start = i_;
        if (i_ < s_.size() && s_[i_] == '-')
            ++i_;
        std::size_t digits = i_;
        while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9')
            ++i_;
        std::size_t n = i_ - digits;
        if (n == 0 || n > 15 || (s_[digits] == '0' && (n > 1 || digits != start)))
            return std::nullopt;
        if (i_ < s_.size() && (s_[i_] == '.' || s_[i_] == 'e' || s_[i_] == 'E'))
            return std::nullopt;
        return s_.substr(start, i_ - start);
    }
    std::size_t pos() const { return i_; }
    std::string_view from(std::size_t start) const { return s_.substr(start, i_ - start); }

  private:
    std::string_view s_;
    std::size_t i_ = 0;
};

bool nameChar(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

bool idChar(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.' || c == ':' || c == '/' || c == ' ';
}

bool keyChar(char c)
{
    return c >= 'a' && c <= 'z';
}

} // namespace

std::optional<SimpleCommand> scanSimpleCommand(std::string_view line)
{
    Scanner sc(line);
    if (!sc.eat('{'))
        return std::nullopt;
    SimpleCommand cmd;
    bool haveName = false, haveId = false, haveArgs = false;
    do {
        auto key = sc.plainString(keyChar, 16);
        if (!key || !sc.eat(':'))
            return std::nullopt;
        if (*key == "execute" && !haveName) {
            auto name = sc.plainString(nameChar, 64);
            if (!name || name->empty())
                return std::nullopt;
            cmd.name = *name;
            haveName = true;
        } else if (*key == "id" && !haveId) {
            haveId = true;
            sc.ws();
            std::size_t start = sc.pos();
            if (sc.literal("null"))
                cmd.id = {};
            else if (sc.literal("true") || sc.literal("false"))
                cmd.id = sc.from(start);
            else if (auto s = sc.plainString(idChar, 64))
                cmd.id = sc.from(start);
            else if (auto n = sc.integer())
                cmd.id = *n;
            else
                return std::nullopt;
        } else if (*key == "arguments" && !haveArgs) {
            haveArgs = true;
            if (!sc.literal("null") && !(sc.eat('{') && sc.eat('}')))
                return std::nullopt;
        } else {
            return std::nullopt; // another key, or one given twice
        }
    } while (sc.eat(','));
    if (!sc.eat('}') || !sc.atEnd() || !haveName)
        return std::nullopt;
    return cmd;
}

} // namespace daxprobe
