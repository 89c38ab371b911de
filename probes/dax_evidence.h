#pragma once

#include <string>


namespace daxprobe {

// STATX_ATTR_DAX is 0x00200000 since Linux 5.10; older uapi headers said
// 0x2000, so define it ourselves.
constexpr unsigned long long kStatxAttrDax = 0x00200000ULL;

struct StatxEvidence {
    bool ran = false;
    std::string file;   // the regular file examined
    bool dax = false;   // STATX_ATTR_DAX set
    bool daxKnown = false; // the kernel reports the attribute at all (attributes_mask)
    std::string error;
};

struct MapSyncEvidence {
    bool ran = false;
    std::string skipped; // why it did not run (read-only mount, --no-active, ...)
    bool ok = false;     // MAP_SHARED_VALIDATE|MAP_SYNC succeeded
    std::string error;   // errno text when it did not
    bool isPmem = false; // libpmem pmem_map_file's is_pmem and pmem_is_pmem()
};

// statx() of one path (live only).
StatxEvidence statxDax(const std::string &path);

// A regular file on the mount at `mountPoint` on device major:minor, found
// by a bounded walk that does not cross into other mounts; empty if none.
std::string findRegularFile(const std::string &mountPoint, unsigned major, unsigned minor);

// The active check: an O_TMPFILE in `dir` (no name, nothing left behind),
// 2 MiB allocated, statx'ed, mapped with MAP_SYNC, then through libpmem.
MapSyncEvidence mapSyncCheck(const std::string &dir, StatxEvidence *statxOut);

} // namespace daxprobe
