// Per-file DAX (dax=inode): XFS and ext4 without a dax option give DAX to the
// files that carry FS_XFLAG_DAX (xfs_io -c 'chattr +x'), and to files created
// in a directory that carries it. The mount is then neither "DAX" nor "page
// cache": the report says which examined files are which.
#include <fmt/format.h>

#include "probes/judges/remedies.h"
#include "probes/judges/verdict.h"
#include "probes/judges/virtio_pmem.h"

namespace daxprobe
{

namespace
{

std::string parentDir(const std::string &path, const std::string &fallback)
{
    auto slash = path.rfind('/');
    if (slash == std::string::npos || slash == 0)
        return fallback;
    return path.substr(0, slash);
}

std::string joined(const std::vector<std::string> &v)
{
    std::string out;
    for (const auto &s : v)
        out += (out.empty() ? "" : ", ") + s;
    return out;
}

} // namespace

const MountEntry *mountOfPath(const std::vector<MountEntry> &mounts, const std::string &path)
{
    if (path.empty() || path.front() != '/')
        return nullptr;
    const MountEntry *best = nullptr;
    for (const auto &m : mounts) {
        const std::string &mp = m.mountPoint;
        bool prefix = path.compare(0, mp.size(), mp) == 0 &&
                      (mp == "/" || path.size() == mp.size() || path[mp.size()] == '/');
        if (prefix && (!best || mp.size() >= best->mountPoint.size()))
            best = &m;
    }
    return best;
}

Verdict judgePerFile(const MountReport &mr, Verdict v)
{
    const MountEntry &m = *mr.mount;
    const MountLiveFacts *live = mr.live;
    std::vector<std::string> dax, plain;
    for (const FileFacts *f : mr.files) {
        if (!f->statx.observed()) {
            if (f->statx.state != EvidenceState::NotRun)
                v.evidence.push_back({"statx", "not checked: " + f->statx.text});
            continue;
        }
        v.evidence.push_back({"statx", fmt::format("STATX_ATTR_DAX {} on {}",
                                                   f->statx.dax ? "set" : "clear", f->path)});
        (f->statx.dax ? dax : plain).push_back(f->path);
    }
    // The mount's own probe: a new file in its root (O_TMPFILE) inherits the
    // root directory's flag; an existing file found by the walk has its own.
    bool probeRan = live && live->statx.observed();
    bool probeDax = probeRan && live->statx.dax;
    bool newFiles = probeRan && live->statx.file.find("(O_TMPFILE)") != std::string::npos;
    std::string probeLine;
    if (probeRan)
        probeLine = newFiles
                        ? fmt::format("new files in {} are {}", m.mountPoint,
                                      probeDax ? "DAX (the directory carries the flag)"
                                               : "not DAX (the directory has no DAX flag)")
                        : fmt::format("{} is {}", live->statx.file, probeDax ? "DAX" : "not DAX");

    std::string dir = plain.empty() ? m.mountPoint : parentDir(plain.front(), m.mountPoint);
    std::string bothRemedies = fmt::format(
        "{}   # every file DAX; or per directory: {}   # files created there from then on are DAX",
        remountDax(mr.target), setDaxFlag(dir));

    if (!dax.empty() || probeDax) {
        v.code = code::DaxPerFile;
        v.severity = Severity::Ok;
        std::string which;
        if (!dax.empty())
            which += "; DAX: " + joined(dax);
        if (!plain.empty())
            which += "; not DAX (page cache): " + joined(plain);
        if (!probeLine.empty())
            which += "; " + probeLine;
        v.summary = fmt::format("{} is in per-file DAX mode (dax=inode): files with the DAX flag "
                                "are DAX{}",
                                m.mountPoint, which);
        for (const auto &p : plain)
            v.warnings.push_back(
                fmt::format("{} has no DAX flag: its reads go through the page cache", p));
        if (!plain.empty()) {
            v.severity = Severity::Warning;
            v.remedy = bothRemedies;
        }
        if (live && live->mapSync.observed() && !live->mapSync.mapped && probeDax &&
            mr.virtioPmem) {
            v.severity = Severity::Warning;
            v.warnings.push_back("MAP_SYNC refused as expected: " + virtioPmemConsequence());
        }
        return v;
    }

    v.code = code::DaxNotRequested;
    // An explicit dax=inode is a choice; no option at all is usually an oversight.
    v.severity = mr.daxOption == DaxOption::Inode ? Severity::Warning : Severity::Problem;
    v.summary =
        fmt::format("{} is mounted without dax=always: per-file mode (dax=inode), and no "
                    "file examined has the DAX flag{}{}, so reads go through the page cache",
                    m.mountPoint, plain.empty() ? "" : " (" + joined(plain) + ")",
                    probeLine.empty() ? "" : "; " + probeLine);
    v.remedy = bothRemedies;
    return v;
}

} // namespace daxprobe
