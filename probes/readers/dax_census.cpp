#include "probes/readers/dax_census.h"

#include <algorithm>
#include <sys/sysmacros.h>

#include <fmt/format.h>

#include "probes/readers/dax_evidence.h"
#include "probes/readers/fiemap.h"
#include "probes/readers/file_walk.h"

namespace daxprobe
{

namespace
{

// STATX_ATTR_COMPRESSED (uapi linux/stat.h): EROFS sets it on compressed files.
constexpr std::uint64_t kStatxAttrCompressed = 0x4;

// The kernel's reason a file is not DAX: compressed (statx, or an encoded
// extent), else data kept inline (an inline or tail extent).
NotDaxReason reasonOf(int fd, const StatxEvidence &statx)
{
    if (statx.rawKnown && (statx.attributes & kStatxAttrCompressed))
        return NotDaxReason::Compressed;
    NotDaxReason reason = NotDaxReason::Unknown;
    forEachExtent(fd, [&](const fiemap_extent &e) {
        if (e.fe_flags & FIEMAP_EXTENT_ENCODED)
            reason = NotDaxReason::Compressed;
        else if (e.fe_flags & (FIEMAP_EXTENT_DATA_INLINE | FIEMAP_EXTENT_DATA_TAIL))
            reason = NotDaxReason::InlineTail;
        return reason != NotDaxReason::Compressed;
    });
    return reason;
}

void count(DaxCensus &census, NotDaxReason reason)
{
    switch (reason) {
    case NotDaxReason::InlineTail:
        ++census.inlineTail;
        break;
    case NotDaxReason::Compressed:
        ++census.compressed;
        break;
    case NotDaxReason::Unknown:
        ++census.unknown;
        break;
    }
}

} // namespace

DaxCensus takeDaxCensus(const std::string &mountPoint, unsigned major, unsigned minor,
                        const CensusLimits &limits)
{
    DaxCensus census;
    auto visit = [&](int fd, const std::string &rel) {
        StatxEvidence statx = statxDax(fd, rel);
        if (!statx.observed()) {
            // statx of an open file does not fail in practice; count it as
            // not DAX with no reason rather than lose it.
            count(census, NotDaxReason::Unknown);
            return;
        }
        if (statx.dax) {
            ++census.daxFiles;
            return;
        }
        NotDaxReason reason = reasonOf(fd, statx);
        count(census, reason);
        if (census.exceptions.size() < limits.maxNamed)
            census.exceptions.push_back({pathInMount(mountPoint, rel), reason});
    };
    auto walked =
        walkRegularFiles(mountPoint, makedev(major, minor), fmt::format("{}:{}", major, minor),
                         {limits.maxFiles, limits.maxTime}, visit);
    if (!walked) {
        census.fail(walked.error().describe());
        return census;
    }
    census.files = walked->files;
    census.stoppedEarly = std::move(walked->stoppedEarly);
    std::sort(census.exceptions.begin(), census.exceptions.end(),
              [](const auto &a, const auto &b) { return a.path < b.path; });
    census.observe();
    return census;
}

} // namespace daxprobe
