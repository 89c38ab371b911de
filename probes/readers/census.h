#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/evidence_state.h"

namespace daxprobe
{

// Why a regular file on a DAX mount is not DAX, as the kernel tells it.
enum class NotDaxReason {
    InlineTail, // FIEMAP_EXTENT_DATA_INLINE / DATA_TAIL: data kept in metadata
    Compressed, // STATX_ATTR_COMPRESSED or FIEMAP_EXTENT_ENCODED
    Unknown,    // statx says not DAX; FIEMAP gives no reason
};

// The report's and the capture's words: inline_tail, compressed, unknown.
std::string_view notDaxReasonName(NotDaxReason r);
// The reverse; Unknown for a word it does not know.
NotDaxReason notDaxReasonFrom(std::string_view name);

struct NotDaxFile {
    std::string path; // absolute
    NotDaxReason reason = NotDaxReason::Unknown;
    bool operator==(const NotDaxFile &) const = default;
};

// The per-file DAX census of one mount (dax_census.h): every regular file's
// STATX_ATTR_DAX, or a sample of them on a large tree, bounded. Observed when
// the walk ran (complete or not), Failed when it could not start, NotRun
// when nobody asked (old captures).
struct DaxCensus : EvidenceOutcome {
    std::uint64_t files = 0;                                   // regular files examined
    std::uint64_t seen = 0;                                    // regular files met (a name each)
    std::uint64_t daxFiles = 0;                                // of them with STATX_ATTR_DAX
    std::uint64_t inlineTail = 0, compressed = 0, unknown = 0; // the others, by reason
    std::vector<NotDaxFile> exceptions; // the first few not-DAX files, by path
    std::string sampled;                // the sampling rule; empty when every file met was examined
    std::string stoppedEarly;           // which bound stopped it; empty when complete

    std::uint64_t notDax() const { return files - daxFiles; }
};

} // namespace daxprobe
