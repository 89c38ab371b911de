#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/evidence_state.h"
#include "base/statx_dax.h"

namespace daxprobe
{

// Observed: the payload below is the answer. Failed: statx itself failed.
// Skipped: no file to examine.
struct StatxEvidence : EvidenceOutcome {
    std::string file;      // the regular file examined
    bool dax = false;      // STATX_ATTR_DAX set
    bool daxKnown = false; // the kernel reports the attribute at all (attributes_mask)
    // The raw words statx returned, kept in captures so a replay decodes
    // them again (older captures hold only the decoded flags).
    bool rawKnown = false;
    std::uint64_t attributes = 0;
    std::uint64_t attributesMask = 0;
};

// The decoding of statx's stx_attributes/stx_attributes_mask, apart from the
// system call, so the unit suite holds it to the kernel's bit (a wrong
// constant would otherwise show only in a real guest). 0x2000, the old
// header's value, is STATX_ATTR_MOUNT_ROOT on current kernels.
constexpr void decodeStatxAttributes(StatxEvidence &ev, std::uint64_t attributes,
                                     std::uint64_t mask)
{
    ev.rawKnown = true;
    ev.attributes = attributes;
    ev.attributesMask = mask;
    ev.daxKnown = (mask & kStatxAttrDax) != 0;
    ev.dax = (attributes & kStatxAttrDax) != 0;
}

// Skipped: no test file (read-only mount, --no-active, no O_TMPFILE).
// Observed: the test file was made; `mapped` is the kernel's answer and text
// the errno when it refused. A test file that could not be allocated is
// read as a refusal too, as it always was: it never reaches the mmap.
struct MapSyncEvidence : EvidenceOutcome {
    bool mapped = false; // MAP_SHARED_VALIDATE|MAP_SYNC succeeded
    // libpmem pmem_map_file's is_pmem and pmem_is_pmem(); nullopt when libpmem
    // never answered (not installed: Facts::missingLibraries says so once, or
    // its pmem_map_file failed).
    std::optional<bool> isPmem;
};

// statx() of one path (live only).
StatxEvidence statxDax(const std::string &path);
// The same of an open file: what a name leads to by now does not matter.
StatxEvidence statxDax(int fd, const std::string &label);

// A regular file on the mount at `mountPoint` on device major:minor, found
// by a bounded walk that does not cross into other mounts; empty if none.
std::string findRegularFile(const std::string &mountPoint, unsigned major, unsigned minor);

// The active check: an O_TMPFILE in `dir` (no name, nothing left behind),
// 2 MiB allocated, statx'ed, mapped with MAP_SYNC, then through libpmem.
MapSyncEvidence mapSyncCheck(const std::string &dir, StatxEvidence *statxOut);

} // namespace daxprobe
