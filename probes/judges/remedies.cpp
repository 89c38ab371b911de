#include "probes/judges/remedies.h"

#include <fmt/format.h>

#include "probes/readers/kernel_cmdline.h"
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

MountTarget mountTarget(const MountEntry &m, const BlockDevFacts *blockdev,
                        const std::string &kernelCmdline)
{
    MountTarget t{m.mountPoint, m.fstype, blockdev ? "/dev/" + blockdev->name : m.source, false,
                  ""};
    t.bootRoot = m.mountPoint == "/";
    if (t.bootRoot)
        t.rootflags = kernelParam(kernelCmdline, "rootflags").value_or("");
    return t;
}

namespace
{

// mkfs refuses to overwrite the old filesystem without its force flag.
const char *mkfsForce(const MountTarget &t)
{
    return t.fstype == "xfs" ? " -f" : t.fstype.rfind("ext", 0) == 0 ? " -F" : "";
}

// The mount option that asks for DAX at every mount: XFS names the mode;
// ext4 and EROFS take the bare word on every kernel.
const char *daxWord(const MountTarget &t)
{
    return t.fstype == "xfs" ? "dax=always" : "dax";
}

// The root's rootflags with DAX asked for (and `extra` options), the rest kept.
std::string rootflagsWithDax(const MountTarget &t, const std::string &extra = "")
{
    std::string flags = daxWord(t);
    if (!extra.empty())
        flags += "," + extra;
    for (std::string_view o : splitFields(t.rootflags, ','))
        if (o != "dax" && o.rfind("dax=", 0) != 0 && (extra.empty() || o.rfind("data=", 0) != 0))
            flags += "," + std::string(o);
    return flags;
}

} // namespace

std::string bootWithDaxAnd(const MountTarget &t, const std::string &extra)
{
    return fmt::format("reboot with rootflags={} on the kernel command line (a VM booted with "
                       "-kernel: its -append; GRUB: GRUB_CMDLINE_LINUX in /etc/default/grub, "
                       "then update-grub; an initramfs that mounts the root itself takes its "
                       "own options: supermin's, libguestfs's appliance, ignores rootflags= "
                       "and mounts root=/dev/pmemN with dax)",
                       shellQuote(rootflagsWithDax(t, extra)));
}

std::string remountDax(const MountTarget &t)
{
    if (t.bootRoot)
        return bootWithDaxAnd(t) +
               "   # / is mounted at boot: it cannot be unmounted, and a remount "
               "does not change dax";
    return fmt::format("umount {0} && mount -o dax=always {1} {0}", shellQuote(t.mountPoint),
                       shellQuote(t.device));
}

std::string remakeFilesystem(const MountTarget &t, const std::string &extra)
{
    if (t.bootRoot)
        return fmt::format("make the root filesystem again from outside this system (the image "
                           "builder's mkfs, or {}{} {} on its image), then {}   # / cannot be "
                           "made again while it is mounted",
                           shellQuote("mkfs." + t.fstype), mkfsForce(t), extra, bootWithDaxAnd(t));
    return fmt::format("umount {0}; {1}{2} {3} {4}; mount -o dax=always {4} {0}   "
                       "# destroys the data on {4}: back it up first",
                       shellQuote(t.mountPoint), shellQuote("mkfs." + t.fstype), mkfsForce(t),
                       extra, shellQuote(t.device));
}

bool rebuildReconfigures(const MountTarget &t)
{
    return !t.bootRoot;
}

std::string rebuildOnFsdax(const MountTarget &t, const NdNamespace &ns)
{
    if (t.bootRoot)
        return fmt::format("{} holds /, so it cannot be reconfigured from inside: on the host, "
                           "give the image an fsdax info block (ndctl write-infoblock -o FILE "
                           "-m fsdax -a 2M, the filesystem at its data offset), then {}",
                           ns.dev, bootWithDaxAnd(t));
    const char *force = mkfsForce(t);
    return fmt::format("umount {0}; {1}; {2}{5} {3}; mount -o dax=always {3} {0}   "
                       "# destroys the data on {4}: back it up first",
                       shellQuote(t.mountPoint), createFsdax(ns.dev),
                       shellQuote("mkfs." + t.fstype), shellQuote(t.device), ns.dev, force);
}

std::string rebuildErofsForDax(const MountTarget &t)
{
    if (t.bootRoot)
        return fmt::format("make the image again without inline tails (mkfs.erofs -E "
                           "noinline_data IMAGE SOURCE_DIR, no -z), then {}",
                           bootWithDaxAnd(t));
    return fmt::format("umount {0}; mkfs.erofs -E noinline_data {1} SOURCE_DIR; "
                       "mount -t erofs -o dax {1} {0}   # SOURCE_DIR: the tree the image was "
                       "made from; no -z: compressed files are never DAX",
                       shellQuote(t.mountPoint), shellQuote(t.device));
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
