#pragma once

// The floors' one write loop (bench/vport_echo.cpp, bench/change_floor.cpp).
// libc only, like the floors themselves: they measure what a program without
// daxprobe's code pays, so they do not link base/safe_files.h's writeAll.

#include <cerrno>
#include <cstddef>
#include <unistd.h>

inline bool writeAll(int fd, const char *p, std::size_t n)
{
    while (n > 0) {
        ssize_t w = ::write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        p += w;
        n -= static_cast<std::size_t>(w);
    }
    return true;
}
