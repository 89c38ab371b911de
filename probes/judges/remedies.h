#pragma once

#include <cstdint>
#include <string>

#include "probes/readers/blockdev.h"
#include "probes/readers/mountinfo.h"
#include "probes/readers/topology.h"

namespace daxprobe
{

// The commands a verdict's remedy names. Mount points and sources come from
// mountinfo: anyone who can mount can choose them, so every one is quoted
// before it lands in a command line.
std::string createFsdax(const std::string &nsDev);
// ndctl refuses every mode but raw below 16 MiB ("'--size=' must be >= 16MiB
// for 'fsdax' mode", the kernel's nd_namespace_store() limit), and a
// reconfiguration keeps the namespace's size: a smaller one gets no
// reconfiguration, only this reason (issue 36).
constexpr std::uint64_t kMinNamespaceSize = 16ULL << 20;
bool reconfigurable(const NdNamespace &ns);
std::string tooSmallToReconfigure(const NdNamespace &ns);
// 2 MiB alignment for an fsdax or devdax namespace, keeping its mode.
std::string realign(const NdNamespace &ns);

// Where a mount's remedy acts. The device is the node of mountinfo's
// major:minor (the kernel's own root says "/dev/root", a node that does not
// exist). The root filesystem is mounted by the boot and unmounted by
// nothing while the system runs, and ext4 does not change dax on a
// remount: its remedies go through the kernel command line, or through the
// image it was built from.
struct MountTarget {
    std::string mountPoint;
    std::string fstype;
    std::string device;    // /dev/pmem0p1, else the mount's source
    bool bootRoot = false; // "/"
    std::string rootflags; // the kernel command line's rootflags= (bootRoot)
};
MountTarget mountTarget(const MountEntry &m, const BlockDevFacts *blockdev,
                        const std::string &kernelCmdline);

std::string remountDax(const MountTarget &t);
// The root's remedy: the boot that mounts it with DAX (and `extra` options):
// the kernel command line is where its options live (init/do_mounts.c takes
// rootflags= as the mount's data).
std::string bootWithDaxAnd(const MountTarget &t, const std::string &extra = "");
// The whole sequence for a filesystem on a namespace that cannot do DAX:
// reconfiguring the namespace destroys its contents.
std::string rebuildOnFsdax(const MountTarget &t, const NdNamespace &ns);
// Whether that sequence reconfigures a namespace from inside this system
// (a read-only region refuses it); the root's is done on its image instead.
bool rebuildReconfigures(const MountTarget &t);
// Make the filesystem again with other mkfs options (`extra`, e.g. "-b 4096"),
// on the same device: for what only mkfs decides (block size, features).
std::string remakeFilesystem(const MountTarget &t, const std::string &extra);
// EROFS keeps a file's tail inline in its metadata by default, and inline
// or compressed data is never DAX: the image made again without both, from
// the tree it was made from (SOURCE_DIR), and mounted with dax.
std::string rebuildErofsForDax(const MountTarget &t);
// Per-file DAX (dax=inode): the flag on a directory is inherited by files
// created in it afterwards.
std::string setDaxFlag(const std::string &dir);
// virtio-fs DAX needs a window (a PCI BAR) from the VMM; the ones users run
// give none. The fact (one sentence), and the remedy for files that are not
// DAX: where DAX for shared files does exist (without the fact: a verdict
// shows that as its warning).
std::string virtiofsNoWindow();
std::string virtiofsWithoutWindow();

// CXL: a 1-way pmem region of memdev `memdev` in the window of root decoder
// `rootDecoder`. `cxl create-region` exits 0 after a failed commit ("created
// 0 regions"), so the remedy ends with the listing that shows the outcome.
std::string createCxlRegion(const std::string &rootDecoder, const std::string &memdev);
// An fsdax namespace on the nd region a CXL region became.
std::string createFsdaxOn(const std::string &ndRegion);

} // namespace daxprobe
