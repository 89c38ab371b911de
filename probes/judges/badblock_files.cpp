#include "probes/judges/badblock_files.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "probes/readers/text_util.h"

namespace daxprobe
{

namespace
{

constexpr std::size_t kFilesInSummary = 3;

std::vector<BadRange> clipped(const BadblockScan &scan)
{
    return clipToPartition(scan.ranges, scan.startSector, scan.sectors);
}

// One dd per run of adjacent damaged pages.
std::string rewriteFile(const std::string &path, const std::vector<DamagedExtent> &pieces)
{
    std::vector<std::pair<std::uint64_t, std::uint64_t>> pages; // [first, end)
    for (const auto &p : pieces) {
        std::uint64_t first = p.offset / kPoisonPage;
        std::uint64_t end = (p.offset + p.length + kPoisonPage - 1) / kPoisonPage;
        if (!pages.empty() && first <= pages.back().second)
            pages.back().second = std::max(pages.back().second, end);
        else
            pages.push_back({first, end});
    }
    std::string out;
    for (const auto &[first, end] : pages)
        out += (out.empty() ? "" : " && ") +
               rewriteCommand(path, first * kPoisonPage, (end - first) * kPoisonPage);
    return out;
}

std::vector<DamagedFile> damagedFiles(const BadblockScan &scan)
{
    std::map<std::string, std::vector<DamagedExtent>> byPath;
    for (const auto &e : scan.extents)
        byPath[e.path].push_back(e);
    std::vector<DamagedFile> out;
    for (auto &[path, pieces] : byPath) {
        std::sort(pieces.begin(), pieces.end(),
                  [](const auto &a, const auto &b) { return a.offset < b.offset; });
        std::string rewrite = scan.clearsPoison ? rewriteFile(path, pieces) : std::string();
        out.push_back({path, std::move(pieces), std::move(rewrite)});
    }
    return out;
}

std::string rangesText(const std::vector<BadRange> &ranges)
{
    std::string out;
    for (const auto &r : ranges)
        out += fmt::format("{}sector {} count {}", out.empty() ? "" : ", ", r.sector, r.count);
    return out;
}

// Which method named the files, and how far it got.
std::pair<std::string, std::string> methodEvidence(const BadblockScan &scan)
{
    std::string s = scan.method == "getfsmap"
                        ? fmt::format("GETFSMAP named the owners; a walk of {} regular file(s) "
                                      "found their paths",
                                      scan.filesScanned)
                        : fmt::format("FIEMAP of {} regular file(s)", scan.filesScanned);
    if (!scan.fsmapNote.empty())
        s += " (" + scan.fsmapNote + ")";
    if (!scan.stoppedEarly.empty())
        s += ", incomplete: " + scan.stoppedEarly;
    return {scan.method == "getfsmap" ? "getfsmap" : "fiemap", s};
}

// The unowned ranges, named where GETFSMAP gives them a special owner.
void appendUnowned(const BadblockReport &br, Verdict &v)
{
    for (const auto &r : br.scan->special)
        v.evidence.push_back(
            {"no file", fmt::format("sector {} count {}: {}", r.sector, r.count, r.owner)});
    std::vector<BadRange> rest;
    for (const auto &u : br.unowned) {
        bool named = std::any_of(br.scan->special.begin(), br.scan->special.end(), [&](auto &r) {
            return r.sector <= u.sector && u.sector + u.count <= r.sector + r.count;
        });
        if (!named)
            rest.push_back(u);
    }
    if (!rest.empty())
        v.evidence.push_back({"no file", rangesText(rest) + ": metadata or free space"});
}

std::string namesText(const std::vector<DamagedFile> &files)
{
    std::string out;
    for (std::size_t i = 0; i < files.size() && i < kFilesInSummary; ++i)
        out += (i ? ", " : "") + files[i].path;
    if (files.size() > kFilesInSummary)
        out += fmt::format(" and {} more", files.size() - kFilesInSummary);
    return out;
}

constexpr const char *kRemedyClearable =
    "restore each file from a backup, or rewrite its damaged pages through the filesystem (its "
    "rewrite command: zeros, a write clears the poison); deleting the file frees the blocks";

// Measured in a QEMU NVDIMM guest (tests/vm badblocks-*): the rewrite through
// DAX fails with EFAULT (a block-device write with EIO) and the list keeps the
// sectors; a copy renamed over the file reads.
std::string unclearableRemedy(const std::string &bus)
{
    return fmt::format(
        "{} cannot clear media errors (no clear_error in /sys/bus/nd/devices/{}/commands; "
        "QEMU's NVDIMM has none): a write there fails as a read does. Restore each "
        "file from a backup under a new name and rename it over the damaged one (cp BACKUP "
        "FILE.new && mv FILE.new FILE); the damaged blocks are freed but stay bad",
        bus.empty() ? "the nd bus" : bus, bus.empty() ? "ndbusN" : bus);
}

Verdict verdictOf(const BadblockReport &br)
{
    const BadblockScan &scan = *br.scan;
    Verdict v;
    v.severity = Severity::Warning;
    v.evidence.push_back({"badblocks", fmt::format("/sys/block/{}/badblocks: {}", scan.disk,
                                                   rangesText(clipped(scan)))});
    if (!scan.observed()) {
        v.code = code::BadblocksNotMapped;
        v.summary = fmt::format("{} bad sector(s) in this filesystem; which files hold them is "
                                "unknown: {}",
                                br.badSectors, scan.text);
        return v;
    }
    auto [key, text] = methodEvidence(scan);
    v.evidence.push_back({key, text});
    for (const auto &f : br.files)
        for (const auto &p : f.pieces)
            v.evidence.push_back(
                {"file", fmt::format("{}: bytes {}-{} (sector {})", f.path, p.offset,
                                     p.offset + p.length - 1, p.sector)});
    appendUnowned(br, v);
    if (!br.files.empty()) {
        v.code = code::BadblocksInFiles;
        v.summary = fmt::format("{} bad sector(s) lie in {} file(s): {}; reads there fail with "
                                "EIO",
                                br.badSectors, br.files.size(), namesText(br.files));
        v.remedy = scan.clearsPoison ? kRemedyClearable : unclearableRemedy(scan.bus);
    } else {
        v.code = code::BadblocksNotInFiles;
        v.summary = fmt::format("{} bad sector(s) lie in metadata or free space: no {}file "
                                "holds them",
                                br.badSectors, scan.stoppedEarly.empty() ? "" : "walked ");
    }
    if (!scan.stoppedEarly.empty())
        v.warnings.push_back("the walk stopped early (" + scan.stoppedEarly +
                             "): other files may be damaged too");
    return v;
}

} // namespace

std::string rewriteCommand(const std::string &path, std::uint64_t offset, std::uint64_t length)
{
    return fmt::format("dd if=/dev/zero of={} bs={} seek={} count={} conv=notrunc oflag=direct",
                       shellQuote(path), kPoisonPage, offset / kPoisonPage, length / kPoisonPage);
}

std::vector<BadRange> unownedRanges(const BadblockScan &scan)
{
    std::vector<BadRange> owned;
    for (const auto &e : scan.extents)
        owned.push_back({e.sector, (e.length + kSectorSize - 1) / kSectorSize});
    std::sort(owned.begin(), owned.end(),
              [](const auto &a, const auto &b) { return a.sector < b.sector; });
    std::vector<BadRange> out;
    for (const auto &r : clipped(scan)) {
        std::uint64_t at = r.sector, end = r.sector + r.count;
        for (const auto &o : owned) {
            if (o.sector + o.count <= at || o.sector >= end)
                continue;
            if (o.sector > at)
                out.push_back({at, o.sector - at});
            at = std::max(at, o.sector + o.count);
        }
        if (at < end)
            out.push_back({at, end - at});
    }
    return out;
}

std::optional<BadblockReport> judgeBadblocks(const BadblockScan &scan)
{
    BadblockReport br;
    br.scan = &scan;
    for (const auto &r : clipped(scan))
        br.badSectors += r.count;
    if (br.badSectors == 0)
        return std::nullopt;
    if (scan.observed()) {
        br.files = damagedFiles(scan);
        br.unowned = unownedRanges(scan);
    }
    br.verdict = verdictOf(br);
    return br;
}

} // namespace daxprobe
