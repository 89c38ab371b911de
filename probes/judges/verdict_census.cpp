// The per-file census on a dax=always mount: the mount says DAX, but the
// kernel gives DAX per file, and some files are not (EROFS keeps a file's
// tail inline by default; compressed files are never DAX). The verdict
// names them, counts them all, and gives the remedy their cause has.
#include <fmt/format.h>

#include "probes/judges/remedies.h"
#include "probes/judges/verdict.h"

namespace daxprobe
{

namespace
{

constexpr std::size_t kNamesPerReason = 5;

// The named files of one reason, and how many more there are.
std::string namesOf(const DaxCensus &c, NotDaxReason reason, std::uint64_t total)
{
    std::string out;
    std::size_t named = 0;
    for (const auto &e : c.exceptions)
        if (e.reason == reason && named < kNamesPerReason)
            out += (named++ ? ", " : "") + e.path;
    if (total > named)
        out += fmt::format("{}{} more", named ? " and " : "", total - named);
    return out;
}

// The census's count: "M of N files", or "M of N sampled files".
std::string censusCount(const DaxCensus &c)
{
    if (c.sampled.empty())
        return fmt::format("{} of {} files", c.daxFiles, c.files);
    return fmt::format("{} of {} sampled files", c.daxFiles, c.files);
}

bool isErofs(const MountEntry &m)
{
    return m.fstype == "erofs";
}

void warnPerReason(const MountReport &mr, const DaxCensus &c, Verdict &v)
{
    bool erofs = isErofs(*mr.mount);
    if (c.inlineTail)
        v.warnings.push_back(fmt::format(
            "{} file(s) keep their data's tail inline in metadata{}, which cannot be mapped with "
            "DAX: {}",
            c.inlineTail, erofs ? " (mkfs.erofs's default)" : "",
            namesOf(c, NotDaxReason::InlineTail, c.inlineTail)));
    if (c.compressed)
        v.warnings.push_back(fmt::format(
            "{} compressed file(s) are never DAX (their data is decompressed into the page "
            "cache){}: {}",
            c.compressed,
            erofs ? "; only an uncompressed image (mkfs.erofs without -z) makes "
                    "them DAX"
                  : "",
            namesOf(c, NotDaxReason::Compressed, c.compressed)));
    if (c.unknown)
        v.warnings.push_back(fmt::format("{} file(s) are not DAX and neither statx nor FIEMAP "
                                         "says why: {}",
                                         c.unknown, namesOf(c, NotDaxReason::Unknown, c.unknown)));
    if (!c.sampled.empty())
        v.warnings.push_back(fmt::format("the census examined a sample ({}) of about {} files: "
                                         "files not examined may not be DAX either",
                                         c.sampled, c.seen));
    if (!c.stoppedEarly.empty())
        v.warnings.push_back("the census stopped early (" + c.stoppedEarly +
                             "): files not examined may not be DAX either");
}

} // namespace

bool censusShowsNotDax(const MountReport &mr, bool deviceDax)
{
    if (!mr.live || !mr.live->census.observed())
        return false;
    const DaxCensus &c = mr.live->census;
    if (c.notDax() == 0)
        return false;
    // Some files are DAX: the mount is; or none is, but each one that is
    // not has a layout reason of its own on a device that can.
    return c.daxFiles > 0 || (deviceDax && c.inlineTail + c.compressed == c.notDax());
}

std::string censusText(const DaxCensus &c)
{
    std::string s = censusCount(c) + " DAX";
    if (!c.sampled.empty())
        s += fmt::format(" (of about {})", c.seen);
    if (!c.stoppedEarly.empty())
        s += ", incomplete: " + c.stoppedEarly;
    return s;
}

Verdict judgeFilesNotDax(const MountReport &mr, Verdict v)
{
    const MountEntry &m = *mr.mount;
    const DaxCensus &c = mr.live->census;
    v.code = code::FilesNotDax;
    v.severity = Severity::Warning;
    v.summary =
        fmt::format("{} is mounted with dax, but {} are DAX: {} go{} through the page cache",
                    m.mountPoint, censusCount(c), c.notDax(), c.notDax() == 1 ? "es" : "");
    warnPerReason(mr, c, v);
    // Compressed files are never DAX: a choice made with -z, which
    // noinline_data does not undo; the warning says so, no remedy.
    if (isErofs(m) && c.inlineTail)
        v.remedy = rebuildErofsForDax(mr.target);
    return v;
}

} // namespace daxprobe
