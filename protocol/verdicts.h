#pragma once

#include <array>
#include <string_view>

#include "protocol/message.h"

namespace daxprobe::protocol
{

// Schema ids of the agent's documents (agent/REPORT.md, agent/PROFILE.md).
inline constexpr const char *kCheckSchema = "daxprobe.check/1";
inline constexpr const char *kProfileSchema = "daxprobe.profile/1";
inline constexpr const char *kExerciseSchema = "daxprobe.exercise/1";

// The documented verdict set (README "Verdicts", docs/glossary.md). Codes are
// stable API: scripts, the collector and its metrics match on them. The
// probes decide them, the collector counts them: both take them from here.
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
// dax=always and files are DAX, but the per-file census found some that
// are not (EROFS inline tails, compressed files): a warning naming them
inline constexpr const char *FilesNotDax = "files_not_dax";
// virtio-fs without DAX: files are not DAX and each guest copies what it
// reads into its own page cache (no VMM the suite runs gives a DAX window)
inline constexpr const char *VirtiofsPageCache = "virtiofs_page_cache";
// per namespace: a device-DAX device bound to kmem (daxctl's system-ram)
inline constexpr const char *SystemRam = "system_ram";
// per namespace or mount
inline constexpr const char *DeviceCannotDax = "device_cannot_dax";
// overall
inline constexpr const char *DaxVerified = "dax_verified";
inline constexpr const char *ProblemsFound = "problems_found";
inline constexpr const char *NoNfit = "no_nfit";
inline constexpr const char *NoPmemNamespace = "no_pmem_namespace";
inline constexpr const char *CheckFailed = "check_failed";
// system-wide cost (a warning, not a problem; the report's "bounce_buffer"):
// a SWIOTLB bounce buffer set up only because the memory hotplug range
// reaches above 4 GiB
inline constexpr const char *BounceBufferForHotplug = "bounce_buffer_for_hotplug";
// per fsdax/devdax namespace, a cost (the report's "struct_pages"; never
// changes the exit code): its struct pages, in the namespace (map=dev) or in
// guest RAM (map=mem)
inline constexpr const char *StructPagesInNamespace = "struct_pages_in_namespace";
inline constexpr const char *StructPagesInRam = "struct_pages_in_ram";
// per DIMM (nmem): its NFIT flags. Not persistent: not armed, or a failed
// save, restore or flush (a problem under a mounted DAX filesystem);
// map failed: its memory could not be mapped; health event: the DIMM raised
// a SMART event, or its SMART health is critical; health fatal: its SMART
// health says the DIMM failed (a problem); unsafe shutdown: its live
// unsafe-shutdown count rose since the agent last saw it (a problem: writes
// in flight may be lost); read-only: not armed, but every region of it is
// read-only and every filesystem on them mounted read-only (a VMM's shared
// read-only image: QEMU requires unarmed=on for a readonly=on backend), so
// nothing is written that could be lost (not a problem).
inline constexpr const char *DimmOk = "dimm_ok";
inline constexpr const char *DimmReadOnly = "dimm_read_only";
inline constexpr const char *DimmNotPersistent = "dimm_not_persistent";
inline constexpr const char *DimmMapFailed = "dimm_map_failed";
inline constexpr const char *DimmHealthEvent = "dimm_health_event";
inline constexpr const char *DimmHealthFatal = "dimm_health_fatal";
inline constexpr const char *DimmUnsafeShutdown = "dimm_unsafe_shutdown";
// per mount of a disk with bad blocks (a warning: DAX still works; a mount's
// "badblocks"): files hold bad sectors; only metadata or free space does;
// the files could not be looked for
inline constexpr const char *BadblocksInFiles = "badblocks_in_files";
inline constexpr const char *BadblocksNotInFiles = "badblocks_not_in_files";
inline constexpr const char *BadblocksNotMapped = "badblocks_not_mapped";
// CXL (the report's "cxl"): per region, per memdev, or system-wide. A
// region that works, and one that is volatile (not judged for DAX); capacity
// not in use yet (warnings: no region on a memdev's pmem, an nd region
// without a namespace); what keeps CXL pmem from working (problems): no
// memdev (the kernel's driver gave up), a region that cannot commit, no
// serial number, a committed region without its nd region, and a region
// decoded through a port decoder the kernel never committed (passthrough).
inline constexpr const char *CxlRegionOk = "cxl_region_ok";
inline constexpr const char *CxlRamRegion = "cxl_ram_region";
inline constexpr const char *CxlNoRegion = "cxl_no_region";
inline constexpr const char *CxlRegionNoNamespace = "cxl_region_no_namespace";
inline constexpr const char *CxlMemdevMissing = "cxl_memdev_missing";
inline constexpr const char *CxlCommitFailed = "cxl_commit_failed";
inline constexpr const char *CxlNoSerial = "cxl_no_serial";
inline constexpr const char *CxlRegionNoNdRegion = "cxl_region_no_nd_region";
inline constexpr const char *CxlPassthroughUncommitted = "cxl_passthrough_uncommitted";
} // namespace code

// Every code a report's overall verdict can carry, and every code of a mount's
// verdict: the collector exports each one (0 or 1) so alerts can match on the
// absence of a 1.
inline constexpr std::array kOverallCodes{code::DaxVerified, code::ProblemsFound, code::NoNfit,
                                          code::NoPmemNamespace, code::CheckFailed};
inline constexpr std::array kMountCodes{
    code::DaxActive,       code::DaxPerFile,      code::FilesNotDax,      code::DaxSilentlyOff,
    code::DaxNotRequested, code::DeviceCannotDax, code::VirtiofsPageCache};
// A mount verdict with DAX in effect there (the judges' count of DAX mounts,
// the ledger's DAX devices).
constexpr bool daxInEffect(std::string_view mountCode)
{
    return mountCode == code::DaxActive || mountCode == code::DaxPerFile ||
           mountCode == code::FilesNotDax;
}

inline constexpr std::array kDimmCodes{
    code::DimmOk,          code::DimmReadOnly,    code::DimmNotPersistent, code::DimmMapFailed,
    code::DimmHealthEvent, code::DimmHealthFatal, code::DimmUnsafeShutdown};
// A DIMM's SMART health states (ndctl's names): the collector exports each.
inline constexpr std::array kDimmHealthStates{"ok", "non-critical", "critical", "fatal"};

// The daxprobe.check/1 document of a check that could not run (exit code 2):
// one shape for the command line, the daemon and its reports.
json failedCheckReport(std::string_view why);

} // namespace daxprobe::protocol
