#pragma once

#include <cstddef>
#include <string>
#include <string_view>

// Text that came from a guest or from the system being examined (mount
// points, device names, VM names, kernel messages) may be any bytes. These
// are the one place that decides how such bytes are shown.
namespace daxprobe
{

// Bytes of the valid UTF-8 sequence (RFC 3629: no overlong forms, no
// surrogates, nothing past U+10FFFF) starting at s[i]: 1 for ASCII, 2-4 for
// a multi-byte sequence, 0 when the bytes there are not one.
std::size_t utf8SequenceLength(std::string_view s, std::size_t i);

// `s` made safe for a terminal: bytes that are not valid UTF-8, control
// characters (C0, DEL, C1), bidirectional controls (U+202E...) become \xNN,
// and a backslash is doubled so that a literal "\x1b" in a name cannot pose
// as an escape (two names that differ in one byte stay two). Valid UTF-8
// text passes through.
std::string printable(std::string_view s);

// `s` with only its bytes that are not valid UTF-8 as \xNN: what JSON can
// carry (a mount point may be any bytes; JSON text must be UTF-8).
std::string utf8Escaped(std::string_view s);

} // namespace daxprobe
