#include "probes/readers/topology.h"

namespace daxprobe
{

const DaxDevice *Topology::daxDeviceByChardev(const std::string &chardev) const
{
    for (const auto &d : daxDevices)
        if (d.chardev == chardev)
            return &d;
    return nullptr;
}

const NdNamespace *Topology::namespaceByBlockdev(const std::string &blockdev) const
{
    for (const auto &ns : namespaces)
        if (!ns.blockdev.empty() && ns.blockdev == blockdev)
            return &ns;
    return nullptr;
}

const NdBus *Topology::busOf(const NdNamespace &ns) const
{
    for (const auto &r : regions)
        if (r.dev == ns.region)
            for (const auto &b : buses)
                if (b.dev == r.bus)
                    return &b;
    return nullptr;
}

} // namespace daxprobe
