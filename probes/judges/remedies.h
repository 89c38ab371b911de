#pragma once

#include <cstdint>
#include <string>

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
std::string remountDax(const MountEntry &m);
// The whole sequence for a filesystem on a namespace that cannot do DAX:
// reconfiguring the namespace destroys its contents.
std::string rebuildOnFsdax(const MountEntry &m, const NdNamespace &ns);
// Make the filesystem again with other mkfs options (`extra`, e.g. "-b 4096"),
// on the same device: for what only mkfs decides (block size, features).
std::string remakeFilesystem(const MountEntry &m, const std::string &extra);
// EROFS keeps a file's tail inline in its metadata by default, and inline
// or compressed data is never DAX: the image made again without both, from
// the tree it was made from (SOURCE_DIR), and mounted with dax.
std::string rebuildErofsForDax(const MountEntry &m);
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
