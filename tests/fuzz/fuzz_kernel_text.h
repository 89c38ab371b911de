#pragma once

#include <string_view>

namespace daxprobe
{

// The parsers fuzz_kernel_text.cpp drives; the numbers are the selector byte
// of the combined target (and KERNEL_TEXT_PARSER of the single ones).
enum class KernelTextParser {
    Mountinfo = 0,
    Nfit = 1,
    Kmsg = 2,
    Vmstat = 3,
    Meminfo = 4,
    Cedt = 5,
    Uevent = 6,
};
inline constexpr unsigned kKernelTextParsers = 7;

// One input through one parser and its invariants; traps on a violation.
void fuzzKernelText(KernelTextParser parser, std::string_view in);
// The combined target's input: the first byte picks the parser.
void fuzzKernelTextSelected(std::string_view in);

} // namespace daxprobe
