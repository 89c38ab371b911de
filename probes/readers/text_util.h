#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace daxprobe
{

// Small, allocation-light helpers for the line-oriented kernel formats.
std::vector<std::string_view> splitLines(std::string_view text);
std::vector<std::string_view> splitFields(std::string_view line, char sep = ' ');
std::string_view trim(std::string_view s);
std::optional<std::uint64_t> parseU64(std::string_view s);
std::optional<std::int64_t> parseI64(std::string_view s);
// ASCII case-insensitive substring test (kernel lines vary in case).
bool containsNoCase(std::string_view s, std::string_view needle);

// One shell word that a POSIX shell reads back as exactly `s` (Python's
// shlex.quote): unchanged when only safe characters, else single-quoted with
// each ' written as '"'"'. Every path in a printed remedy goes through it, so
// a mount point like "/mnt/a;reboot;$(id)" stays one harmless argument.
std::string shellQuote(std::string_view s);

} // namespace daxprobe
