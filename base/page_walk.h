#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace daxprobe
{

// How a walk touches each page of a mapping.
enum class PageTouch {
    Read,    // reads one byte
    Rewrite, // writes back the byte it read: a write fault, the data unchanged
    Fill,    // writes kFillByte
};
inline constexpr unsigned char kFillByte = 0xa5;

struct PageWalk {
    std::uint64_t pagesTouched = 0;
    // The offset in the mapping of the page that raised SIGBUS, where the
    // walk stopped: a poisoned page (a pmem media error) or a page beyond
    // the end of a file that shrank.
    std::optional<std::uint64_t> sigbusOffset;
};

// Touches [base, base + size) one byte every `step` bytes. A SIGBUS on that
// thread during the walk ends the walk, not the process: the caller reports
// which page failed and cleans up (an exercise's file is still removed).
// A SIGBUS at any other time keeps its default action.
PageWalk touchPages(void *base, std::size_t size, std::size_t step, PageTouch how);

} // namespace daxprobe
