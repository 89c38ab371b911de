#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "root.h"

namespace daxprobe {

// One /dev/kmsg record: "prio,seq,usec,flags;message" (dev-kmsg ABI).
struct KmsgRecord {
    unsigned level = 6;
    std::uint64_t seq = 0;
    std::uint64_t usec = 0;
    std::string message;
    std::string device; // "pmem0" from "XFS (pmem0): ...", when present
};

// Returns false for lines that are not records (continuation "KEY=value"
// lines, blanks, garbage).
bool parseKmsgRecord(std::string_view line, KmsgRecord &out);

// Records that speak about DAX, pmem or the NFIT.
bool isDaxRelevant(const KmsgRecord &record);

struct KmsgFacts {
    bool readable = false;
    std::string error; // e.g. permission denied (dmesg_restrict)
    std::vector<KmsgRecord> records; // only the relevant ones, bounded
};

// Reads dev/kmsg under the root: record by record from the live character
// device (non-blocking, until EAGAIN), or line by line from a captured file.
KmsgFacts readKmsg(const Root &root, std::size_t maxRecords = 256);

} // namespace daxprobe
