#include "probes/readers/dax_census.h"

#include <algorithm>
#include <limits>
#include <sys/sysmacros.h>

#include <fmt/format.h>

#include "probes/readers/dax_evidence.h"
#include "probes/readers/fiemap.h"
#include "probes/readers/file_walk.h"
#include "probes/readers/stride_sample.h"

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

// One examined file: DAX, or why not (and where, to be named).
struct Examined {
    bool dax = false;
    NotDaxFile file;
};

Examined examine(int fd, const std::string &path)
{
    StatxEvidence statx = statxDax(fd, path);
    // statx of an open file does not fail in practice; count it as not DAX
    // with no reason rather than lose it.
    if (statx.observed() && statx.dax)
        return {true, {}};
    return {false, {path, statx.observed() ? reasonOf(fd, statx) : NotDaxReason::Unknown}};
}

void count(DaxCensus &census, const Examined &e)
{
    ++census.files;
    if (e.dax) {
        ++census.daxFiles;
        return;
    }
    switch (e.file.reason) {
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
    census.exceptions.push_back(e.file);
}

} // namespace

DaxCensus takeDaxCensus(const std::string &mountPoint, unsigned major, unsigned minor,
                        const CensusLimits &limits)
{
    DaxCensus census;
    StrideSample<Examined> sample(limits.maxFiles);
    std::uint64_t index = 0; // the visited file's index among those met
    auto select = [&](std::uint64_t i) { return sample.wants(index = i); };
    auto visit = [&](int fd, const std::string &rel) {
        sample.add(index, examine(fd, pathInMount(mountPoint, rel)));
    };
    // The sample bounds the files kept; the walk, by time only, visits the
    // ones the sample wants (about maxFiles per doubling of the stride).
    FileWalkLimits walk{std::numeric_limits<std::uint64_t>::max(), limits.maxTime};
    auto walked = walkRegularFiles(mountPoint, makedev(major, minor),
                                   fmt::format("{}:{}", major, minor), walk, visit, {}, select);
    if (!walked) {
        census.fail(walked.error().describe());
        return census;
    }
    for (const auto &[i, e] : sample.kept())
        count(census, e);
    census.seen = walked->seen;
    if (sample.stride() > 1)
        census.sampled = fmt::format("1 in {0} regular files: the walk's files 0, {0}, {1}, ... "
                                     "in breadth-first readdir order, at most {2}",
                                     sample.stride(), 2 * sample.stride(), limits.maxFiles);
    census.stoppedEarly = std::move(walked->stoppedEarly);
    std::sort(census.exceptions.begin(), census.exceptions.end(),
              [](const auto &a, const auto &b) { return a.path < b.path; });
    if (census.exceptions.size() > limits.maxNamed)
        census.exceptions.resize(limits.maxNamed);
    census.observe();
    return census;
}

} // namespace daxprobe
