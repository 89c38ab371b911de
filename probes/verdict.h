#pragma once

#include <string>
#include <vector>

#include "probes/facts.h"
#include "probes/mount_history.h"

namespace daxprobe
{

// The documented verdict set (README "Verdicts"). Codes are stable API:
// scripts, the collector and the metrics match on them.
namespace code
{
// per namespace
inline constexpr const char *DaxCapable = "dax_capable";
// per mount
inline constexpr const char *DaxActive = "dax_active";
inline constexpr const char *DaxSilentlyOff = "dax_silently_off";
inline constexpr const char *DaxNotRequested = "dax_not_requested";
// dax=inode (XFS/ext4 without a dax option): files with the DAX flag are DAX
// and at least one examined file is.
inline constexpr const char *DaxPerFile = "dax_per_file";
// per namespace or mount
inline constexpr const char *DeviceCannotDax = "device_cannot_dax";
// overall
inline constexpr const char *DaxVerified = "dax_verified";
inline constexpr const char *ProblemsFound = "problems_found";
inline constexpr const char *NoNfit = "no_nfit";
inline constexpr const char *NoPmemNamespace = "no_pmem_namespace";
inline constexpr const char *CheckFailed = "check_failed";
} // namespace code

enum class Severity { Ok, Warning, Problem };
const char *severityName(Severity s);

struct Evidence {
    std::string check;  // mountinfo, queue/dax, statx, map_sync, kmsg, ndctl, nfit, ...
    std::string result; // what it said
};

struct Verdict {
    std::string code;
    Severity severity = Severity::Ok;
    std::string summary;
    std::vector<Evidence> evidence;
    std::string remedy; // the command that fixes it; empty when nothing to fix
    std::vector<std::string> warnings;
};

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
    std::vector<std::string> warnings; // system-wide (badblocks, NFIT damage, ...)
};

// Pure: the same facts always give the same report. The report points into
// `facts`, which must outlive it.
Report evaluate(const Facts &facts);

Verdict judgeNamespace(const NdNamespace &ns);
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
