#include "probes/remedies.h"

#include <fmt/format.h>

#include "probes/text_util.h"

namespace daxprobe
{

std::string createFsdax(const std::string &nsDev)
{
    return fmt::format("ndctl create-namespace -f -e {} -m fsdax",
                       nsDev.empty() ? "namespaceX.Y" : shellQuote(nsDev));
}

std::string remountDax(const MountEntry &m)
{
    return fmt::format("umount {0} && mount -o dax=always {1} {0}", shellQuote(m.mountPoint),
                       shellQuote(m.source));
}

std::string rebuildOnFsdax(const MountEntry &m, const NdNamespace &ns)
{
    // mkfs refuses to overwrite the old filesystem without its force flag.
    const char *force = m.fstype == "xfs" ? " -f" : m.fstype.rfind("ext", 0) == 0 ? " -F" : "";
    return fmt::format("umount {0}; {1}; {2}{5} {3}; mount -o dax=always {3} {0}   "
                       "# destroys the data on {4}: back it up first",
                       shellQuote(m.mountPoint), createFsdax(ns.dev),
                       shellQuote("mkfs." + m.fstype), shellQuote(m.source), ns.dev, force);
}

std::string setDaxFlag(const std::string &dir)
{
    return fmt::format("xfs_io -c 'chattr +x' {}", shellQuote(dir));
}

} // namespace daxprobe
