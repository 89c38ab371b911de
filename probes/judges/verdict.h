#pragma once

#include <optional>
#include <string>
#include <vector>

#include "probes/judges/mount_history.h"
#include "probes/judges/verdict_types.h"
#include "probes/readers/facts.h"

namespace daxprobe
{

struct NamespaceReport {
    const NdNamespace *ns = nullptr;
    Verdict verdict;
};

struct MountReport {
    const MountEntry *mount = nullptr;
    const BlockDevFacts *blockdev = nullptr; // may be null (not a block device)
    const NdNamespace *ns = nullptr;         // may be null (not on a namespace)
    const MountLiveFacts *live = nullptr;    // may be null (replay without it)
    std::vector<std::string> kmsg;           // kernel lines of the mount in place now
    std::vector<HistoryLine> kmsgHistory;    // DAX lines of earlier mount attempts
    std::vector<const FileFacts *> files;    // --path files on this mount
    Verdict verdict;
};

// What judgeMount needs besides the mount's own facts.
struct MountContext {
    std::vector<HistoryLine> kmsgHistory; // shown as history, never as the current state
    std::vector<const FileFacts *> files; // --path files on this mount
    bool virtioPmem = false;              // the namespace is on a virtio-pmem region
};

struct Report {
    std::vector<NamespaceReport> namespaces;
    std::vector<MountReport> mounts;
    Verdict overall;
    int exitCode = 2;
    std::vector<std::string> warnings;   // system-wide (badblocks, NFIT damage, ...)
    std::optional<Verdict> bounceBuffer; // bounce_buffer_for_hotplug, when it applies
};

// Pure: the same facts always give the same report. The report points into
// `facts`, which must outlive it.
Report evaluate(const Facts &facts);

// `dax`: the namespace's device-DAX device, if it has one.
Verdict judgeNamespace(const NdNamespace &ns, const DaxDevice *dax = nullptr);
Verdict judgeMount(const MountEntry &mount, const BlockDevFacts *blockdev, const NdNamespace *ns,
                   const MountLiveFacts *live, const std::vector<std::string> &kmsg,
                   const MountContext &context = {});

// dax=inode on a DAX-capable device (verdict_per_file.cpp): `v` carries the
// evidence gathered so far.
Verdict judgePerFile(const MountEntry &m, const MountLiveFacts *live, const MountContext &context,
                     bool explicitInode, Verdict v);

// The mount that holds `path` (longest mount point that prefixes it; the
// last one listed when mounts are stacked), or null for a relative path.
const MountEntry *mountOfPath(const std::vector<MountEntry> &mounts, const std::string &path);

constexpr std::uint64_t kPmdSize = 2ULL << 20;

} // namespace daxprobe
