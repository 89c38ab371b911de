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

bool reconfigurable(const NdNamespace &ns)
{
    return ns.mode != "raw" || ns.size >= kMinNamespaceSize;
}

std::string tooSmallToReconfigure(const NdNamespace &ns)
{
    return fmt::format("{} is {} KiB: ndctl makes fsdax, devdax and sector namespaces of at "
                       "least 16 MiB only, and a reconfiguration keeps the size, so none is "
                       "offered; a larger namespace needs room in its region",
                       ns.dev, ns.size / 1024);
}

std::string realign(const NdNamespace &ns)
{
    return fmt::format("ndctl create-namespace -f -e {} -m {} --align 2M", shellQuote(ns.dev),
                       ns.mode == "devdax" ? "devdax" : "fsdax");
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

std::string rebuildErofsForDax(const MountEntry &m)
{
    return fmt::format("umount {0}; mkfs.erofs -E noinline_data {1} SOURCE_DIR; "
                       "mount -t erofs -o dax {1} {0}   # SOURCE_DIR: the tree the image was "
                       "made from; no -z: compressed files are never DAX",
                       shellQuote(m.mountPoint), shellQuote(m.source));
}

std::string setDaxFlag(const std::string &dir)
{
    return fmt::format("xfs_io -c 'chattr +x' {}", shellQuote(dir));
}

// Checked 2026-12: QEMU 7.2's vhost-user-fs-pci has no window property
// (-device vhost-user-fs-pci,help), upstream QEMU never merged one, and
// Cloud Hypervisor's docs/fs.md says DAX "is not available". The window
// lived in the virtio-fs project's QEMU branch that Kata built
// (virtio_fs_cache_size). tests/style/qemu_remedies.py checks the options.
std::string virtiofsNoWindow()
{
    return "virtio-fs DAX needs a DAX window from the VMM, and upstream QEMU (7.2 included) and "
           "Cloud Hypervisor give none (only the virtio-fs project's out-of-tree QEMU, built by "
           "Kata Containers with virtio_fs_cache_size, had one)";
}

std::string virtiofsWithoutWindow()
{
    return "for one copy that every guest maps, share the image through virtio-pmem or an NVDIMM "
           "with a DAX filesystem";
}

std::string createCxlRegion(const std::string &rootDecoder, const std::string &memdev)
{
    return fmt::format("cxl create-region -m -t pmem -d {} -w 1 {} && cxl list -R",
                       shellQuote(rootDecoder), shellQuote(memdev));
}

std::string createFsdaxOn(const std::string &ndRegion)
{
    return fmt::format("ndctl create-namespace -m fsdax -r {}", shellQuote(ndRegion));
}

} // namespace daxprobe
