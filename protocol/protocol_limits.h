#pragma once

#include <cstddef>

namespace daxprobe::protocol
{

// Version of the wire protocol announced in the greeting. Bump on any
// incompatible change; additive fields do not bump it.
inline constexpr int kProtocolVersion = 1;

// The resynchronisation sentinel (qemu-ga's guest-sync-delimited): 0xFF never
// occurs in UTF-8, so it can never be part of a JSON text.
inline constexpr char kSentinel = '\xff';

// Every resource a peer controls is bounded (docs/conventions.md, 8).
struct Limits {
    // Longest line, newline excluded. A check report of a guest with dozens of
    // mounts is tens of KiB; 1 MiB leaves room without letting a peer pin memory.
    std::size_t maxMessageBytes = 1 << 20;
    // Deepest nesting of arrays/objects. Our own reports are < 8 deep;
    // nlohmann's recursive destructor is the thing this protects.
    std::size_t maxDepth = 32;
};

// Commands sent to the agent are small; the agent decodes with a tighter cap.
inline constexpr Limits kCommandLimits{64 * 1024, 16};
inline constexpr Limits kReportLimits{};

} // namespace daxprobe::protocol
