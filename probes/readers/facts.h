#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/page_residency.h"
#include "probes/readers/badblocks.h"
#include "probes/readers/blockdev.h"
#include "probes/readers/cedt.h"
#include "probes/readers/census.h"
#include "probes/readers/cxl_bus.h"
#include "probes/readers/dax_evidence.h"
#include "probes/readers/fault_sources.h"
#include "probes/readers/kmsg.h"
#include "probes/readers/libraries.h"
#include "probes/readers/meminfo.h"
#include "probes/readers/mountinfo.h"
#include "probes/readers/nfit.h"
#include "probes/readers/topology.h"

namespace daxprobe
{

// Everything the verdicts are computed from. Files under the Root are read
// by parsers; the rest ("live facts": libndctl, statx, MAP_SYNC, residency,
// perf) can only be observed on a running system and is saved in a capture's
// live.json so a capture replays to the same report.
struct MountLiveFacts {
    StatxEvidence statx;
    MapSyncEvidence mapSync;
    DaxCensus census; // every regular file's DAX attribute (dax_census.h)
};

struct FileFacts {
    std::string path;
    StatxEvidence statx;
    Residency residency;
};

struct Facts {
    std::string kernelRelease;
    std::string kernelCmdline; // /proc/cmdline: how the boot mounted the root (rootflags=)
    NfitInfo nfit;
    CedtInfo cedt; // CXL: the firmware's windows and host bridges
    CxlBus cxl;    // CXL: /sys/bus/cxl, read through the Root
    Topology topology;
    std::vector<MountEntry> mounts;
    std::string mountsError;
    // Every mount's block device (by its major:minor) and every namespace's disk.
    std::vector<BlockDevFacts> blockdevs;
    std::map<std::string, MountLiveFacts> mountLive; // by mount point
    KmsgFacts kmsg;
    Meminfo meminfo;
    std::string meminfoError;
    FaultFacts faults;
    std::vector<FileFacts> files;
    // Mounts of a disk with bad blocks: the files on them (one mount of each
    // device is walked; by mount point).
    std::map<std::string, BadblockScan> badblockScans;
    // Each DIMM's unsafe-shutdown count when the agent last looked (its
    // state directory; empty without one): a rise is a problem.
    ShutdownCounts shutdownsSeen;
    // Libraries a check needed and could not load, each once (libraries.h).
    std::vector<MissingLibrary> missingLibraries;

    const BlockDevFacts *blockdevByNumber(unsigned major, unsigned minor) const;
};

} // namespace daxprobe
