#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace daxprobe::protocol
{

// JSON read as text, without building a DOM: the collector stores a guest's
// report as the bytes it sent, so it needs only to know that they are JSON
// and to read a few fields out of them.

// Where the objects and arrays of a validated text end, recorded by
// validateJson so that the readers below jump over a nested value instead
// of walking it again (a report line was walked four times: 70% of its
// decoding). Keyed by address: a reader of a copy of the text finds nothing
// and walks. At most kMaxSpans are kept (a hostile line of a million empty
// arrays costs no more memory); the rest are walked.
class JsonSpans
{
  public:
    static constexpr std::size_t kMaxSpans = 4096;
    // One allocation per line on the ingest path: a check report has ~45
    // containers (fsdax-ext4: 44), so the vector rarely grows after this.
    JsonSpans() { spans_.reserve(64); }
    void clear() { spans_.clear(); }
    // The container opening at `at`: a slot for close(), or kNone when full.
    static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
    std::size_t open(const char *at);
    void close(std::size_t slot, const char *end);
    // One past the closing bracket of the container opening at `at`, or
    // nullptr when it was not recorded.
    const char *endOf(const char *at) const;

  private:
    struct Span {
        const char *begin, *end;
    };
    std::vector<Span> spans_; // in order of begin: containers open in text order
};

// Checks that `text` is one JSON value exactly as nlohmann::json::parse
// accepts it: RFC 8259 syntax, strings of well-formed UTF-8 (no overlong
// forms, no encoded surrogates, nothing above U+10FFFF), \u escapes with
// paired surrogates, numbers that are finite as doubles, an optional UTF-8
// BOM, whitespace around; a NUL byte after the value ends the text (nlohmann
// stops reading there). Containers nested more than maxDepth deep are
// refused before they are descended into (maxDepth above 1024 counts as
// 1024). One pass; no allocation but `spans`, when given (cleared, then
// filled). On success, the value without the whitespace (and BOM) around
// it. Errors: EBADMSG.
Result<std::string_view> validateJson(std::string_view text, std::size_t maxDepth,
                                      JsonSpans *spans = nullptr);

// The readers below take text validateJson accepted (or a value inside it),
// and the spans it recorded of that same text, if any. On anything else
// they stop, returning false/nullopt, and never read out of bounds.

// Walks an object's members in order. Keys are decoded (escapes resolved),
// so "rep\u006frt" is "report", as in a DOM; a key that is repeated comes
// again (a DOM keeps the last one: callers that assign in order do too).
class JsonObjectReader
{
  public:
    explicit JsonObjectReader(std::string_view object, const JsonSpans *spans = nullptr);
    // The next member; false at the end (or if `object` is not an object).
    bool next(std::string &key, std::string_view &value);

  private:
    std::string_view text_;
    const JsonSpans *spans_;
    std::size_t pos_ = 0;
    bool ok_ = false;
};

// Walks an array's elements in order.
class JsonArrayReader
{
  public:
    explicit JsonArrayReader(std::string_view array, const JsonSpans *spans = nullptr);
    bool next(std::string_view &element);

  private:
    std::string_view text_;
    const JsonSpans *spans_;
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
