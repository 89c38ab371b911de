#include "protocol/identifier.h"

namespace daxprobe::protocol
{

std::string sanitizeIdentifier(std::string_view s, std::size_t maxLen)
{
    std::string out;
    for (char c : s) {
        if (out.size() >= maxLen)
            break;
        out.push_back(c >= 0x21 && c <= 0x7e ? c : '_');
    }
    return out;
}

} // namespace daxprobe::protocol
