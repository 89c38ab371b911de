#include "probes/readers/facts.h"

namespace daxprobe
{

const BlockDevFacts *Facts::blockdevByNumber(unsigned major, unsigned minor) const
{
    for (const auto &b : blockdevs)
        if (b.major == major && b.minor == minor)
            return &b;
    return nullptr;
}

} // namespace daxprobe
