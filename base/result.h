#pragma once

#include <string>
#include <utility>

#include <fmt/format.h>
#include <tl/expected.hpp>

namespace daxprobe
{

// An error that crosses a library boundary: an errno (0 when not from a
// system call) and a message that names what was being done.
struct Error {
    int code = 0;
    std::string message;

    std::string describe() const
    {
        if (code == 0)
            return message;
        return fmt::format("{}: {}", message, errnoName(code));
    }

    static std::string errnoName(int code);
};

// tl::expected today, std::expected once the toolchain has it.
template <typename T> using Result = tl::expected<T, Error>;

inline tl::unexpected<Error> fail(std::string message, int code = 0)
{
    return tl::unexpected<Error>(Error{code, std::move(message)});
}

template <typename... Args>
tl::unexpected<Error> failf(int code, fmt::format_string<Args...> f, Args &&...args)
{
    return fail(fmt::format(f, std::forward<Args>(args)...), code);
}

// Facts readers never fail: what could not be read becomes evidence text.
template <typename T> void storeOrDescribe(Result<T> &&r, T &out, std::string &error)
{
    if (r)
        out = std::move(*r);
    else
        error = r.error().describe();
}

} // namespace daxprobe
