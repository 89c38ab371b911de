#include "probes/judges/remedies.h"

#include <fmt/format.h>

#include "probes/readers/text_util.h"

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

namespace
{

// mkfs refuses to overwrite the old filesystem without its force flag.
const char *mkfsForce(const MountEntry &m)
{
    return m.fstype == "xfs" ? " -f" : m.fstype.rfind("ext", 0) == 0 ? " -F" : "";
}

} // namespace

std::string remakeFilesystem(const MountEntry &m, const std::string &extra)
{
    return fmt::format("umount {0}; {1}{2} {3} {4}; mount -o dax=always {4} {0}   "
                       "# destroys the data on {4}: back it up first",
                       shellQuote(m.mountPoint), shellQuote("mkfs." + m.fstype), mkfsForce(m),
                       extra, shellQuote(m.source));
}

std::string rebuildOnFsdax(const MountEntry &m, const NdNamespace &ns)
{
    const char *force = mkfsForce(m);
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
