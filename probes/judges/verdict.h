#pragma once

#include <optional>
#include <string>
#include <vector>

#include "probes/judges/badblock_files.h"
#include "probes/judges/cxl_verdict.h"
#include "probes/judges/dimm_verdict.h"
#include "probes/judges/mount_history.h"
#include "probes/judges/remedies.h"
#include "probes/judges/struct_pages.h"
#include "probes/judges/verdict_types.h"
#include "probes/readers/facts.h"
#include "probes/readers/pmd_layout.h"

namespace daxprobe
{

struct NamespaceReport {
    const NdNamespace *ns = nullptr;
    Verdict verdict;
};

// A region as the report shows it, with what is decided about it once.
struct RegionReport {
    const NdRegion *region = nullptr;
    bool virtioPmem = false; // on a virtio-pmem bus: no NFIT and no MAP_SYNC, by design
};

// A mount, everything the judge reads about it, and what it decided once
// (the renderers read these, never the mount's options again).
struct MountReport {
    const MountEntry *mount = nullptr;
    DaxOption daxOption = DaxOption::None;   // from the mount's options
    const BlockDevFacts *blockdev = nullptr; // may be null (not a block device)
    const NdNamespace *ns = nullptr;         // may be null (not on a namespace)
    MountTarget target;                      // where its remedies act (the root: the boot)
    // The physical address of the filesystem's first byte modulo 2 MiB: not
    // 0, its 2 MiB-aligned extents are not 2 MiB-aligned in memory and no
    // fault maps a PMD. nullopt when not known (no namespace, not root).
    std::optional<std::uint64_t> pmdOffset;
    bool virtioPmem = false;              // the namespace is on a virtio-pmem region
    const MountLiveFacts *live = nullptr; // may be null (replay without it)
    std::vector<std::string> kmsg;        // kernel lines of the mount in place now
    std::vector<HistoryLine> kmsgHistory; // DAX lines of earlier mount attempts
    std::vector<const FileFacts *> files; // --path files on this mount
    Verdict verdict;
    std::optional<BadblockReport> badblocks; // when its device has bad blocks in this fs
};

// The report: the verdicts, and what was read shown as found. It is the
// renderers' only input; its pointers point into the Facts evaluated.
struct Report {
    std::string kernelRelease;
    const NfitInfo *nfit = nullptr;
    const Topology *topology = nullptr; // buses, device-DAX devices, how the read went
    std::vector<RegionReport> regions;
    bool virtioPmem = false; // some region is virtio-pmem (which has no NFIT, by design)
    std::vector<NamespaceReport> namespaces;
    std::vector<MountReport> mounts;
    std::vector<DimmReport> dimms;
    CxlReport cxl;
    const std::vector<FileFacts> *files = nullptr; // --path files
    const Meminfo *meminfo = nullptr;
    std::string meminfoError;
    const FaultFacts *faults = nullptr;
    EvidenceOutcome kmsg; // whether the kernel log could be read
    Verdict overall;
    int exitCode = 2;
    std::vector<std::string> warnings;        // system-wide (badblocks, NFIT damage, ...)
    std::optional<Verdict> bounceBuffer;      // bounce_buffer_for_hotplug, when it applies
    std::vector<StructPagesCost> structPages; // each fsdax/devdax namespace's struct pages
    std::vector<const MissingLibrary *> missingLibraries; // each said once
};

// Pure: the same facts always give the same report. The report points into
// `facts`, which must outlive it.
Report evaluate(const Facts &facts);

// A filesystem on a namespace's disk or one of its partitions.
struct NamespaceMount {
    std::string mountPoint;
    std::string blockdev; // pmem0p1
};

// `dax`: the namespace's device-DAX device, if it has one; `mounts`: the
// filesystems on its disk and partitions.
Verdict judgeNamespace(const NdNamespace &ns, const DaxDevice *dax = nullptr,
                       const std::vector<NamespaceMount> &mounts = {});
// Everything but mr.verdict filled in.
Verdict judgeMount(const MountReport &mr);

// dax=inode on a DAX-capable device (verdict_per_file.cpp): `v` carries the
// evidence gathered so far.
Verdict judgePerFile(const MountReport &mr, Verdict v);

// dax=always, and the census (mr.live->census) shows files that are not DAX
// while the mount is DAX (verdict_census.cpp): files_not_dax, a warning.
bool censusShowsNotDax(const MountReport &mr, bool deviceDax);
Verdict judgeFilesNotDax(const MountReport &mr, Verdict v);
// "M of N regular file(s) DAX", the census as evidence.
std::string censusText(const DaxCensus &census);

// The mount that holds `path` (longest mount point that prefixes it; the
// last one listed when mounts are stacked), or null for a relative path.
const MountEntry *mountOfPath(const std::vector<MountEntry> &mounts, const std::string &path);

} // namespace daxprobe
