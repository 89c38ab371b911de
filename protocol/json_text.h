#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "result.h"

namespace daxprobe::protocol
{

// JSON read as text, without building a DOM: the collector stores a guest's
// report as the bytes it sent, so it needs only to know that they are JSON
// and to read a few fields out of them.

// Checks that `text` is one JSON value exactly as nlohmann::json::parse
// accepts it: RFC 8259 syntax, strings of well-formed UTF-8 (no overlong
// forms, no encoded surrogates, nothing above U+10FFFF), \u escapes with
// paired surrogates, numbers that are finite as doubles, an optional UTF-8
// BOM, whitespace around; a NUL byte after the value ends the text (nlohmann
// stops reading there). Containers nested more than maxDepth deep are
// refused before they are descended into (maxDepth above 1024 counts as
// 1024). One pass, no allocation. On success, the value without the
// whitespace (and BOM) around it. Errors: EBADMSG.
Result<std::string_view> validateJson(std::string_view text, std::size_t maxDepth);

// The readers below take text validateJson accepted (or a value inside it).
// On anything else they stop, returning false/nullopt, and never read out
// of bounds.

// Walks an object's members in order. Keys are decoded (escapes resolved),
// so "rep\u006frt" is "report", as in a DOM; a key that is repeated comes
// again (a DOM keeps the last one: callers that assign in order do too).
class JsonObjectReader
{
  public:
    explicit JsonObjectReader(std::string_view object);
    // The next member; false at the end (or if `object` is not an object).
    bool next(std::string &key, std::string_view &value);

  private:
    std::string_view text_;
    std::size_t pos_ = 0;
    bool ok_ = false;
};

// Walks an array's elements in order.
class JsonArrayReader
{
  public:
    explicit JsonArrayReader(std::string_view array);
    bool next(std::string_view &element);

  private:
    std::string_view text_;
    std::size_t pos_ = 0;
    bool ok_ = false;
};

// The value if it is a string, decoded; nullopt for any other value.
std::optional<std::string> jsonString(std::string_view value);
// The value if nlohmann would call it number_unsigned: digits only (no
// sign, fraction or exponent) and no more than UINT64_MAX.
std::optional<std::uint64_t> jsonUnsigned(std::string_view value);
bool jsonIsObject(std::string_view value);
bool jsonIsNull(std::string_view value);

} // namespace daxprobe::protocol
