#include "base/result.h"

#include <cstring>

namespace daxprobe
{

std::string Error::errnoName(int code)
{
    // strerrordesc_np is thread-safe and never formats into a shared buffer.
    const char *desc = strerrordesc_np(code);
    return desc ? desc : fmt::format("errno {}", code);
}

} // namespace daxprobe
