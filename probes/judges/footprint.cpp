#include "probes/judges/footprint.h"

#include <cerrno>
#include <sys/wait.h>

#include <fmt/format.h>

#include "probes/readers/text_util.h"

namespace daxprobe
{

std::map<std::string, std::int64_t> vmstatDelta(const Vmstat &before, const Vmstat &after,
                                                const std::vector<std::string> &names)
{
    std::map<std::string, std::int64_t> out;
    for (const auto &name : names) {
        auto b = before.find(name);
        auto a = after.find(name);
        if (b == before.end() || a == after.end())
            continue;
        out[name] = static_cast<std::int64_t>(a->second) - static_cast<std::int64_t>(b->second);
    }
    return out;
}

std::optional<std::int64_t> meminfoKb(const Meminfo &m, const std::string &name)
{
    auto it = m.find(name);
    if (it == m.end())
        return std::nullopt;
    return static_cast<std::int64_t>(it->second / 1024);
}

std::optional<std::int64_t> meminfoDeltaKb(const Meminfo &before, const Meminfo &after,
                                           const std::string &name)
{
    auto b = meminfoKb(before, name);
    auto a = meminfoKb(after, name);
    if (!a || !b)
        return std::nullopt;
    return *a - *b;
}

ChildEnd decodeWaitStatus(int status)
{
    ChildEnd out;
    if (WIFEXITED(status)) {
        out.exitStatus = WEXITSTATUS(status);
        out.passOn = *out.exitStatus;
    } else if (WIFSIGNALED(status)) {
        out.signal = WTERMSIG(status);
        out.passOn = 128 + *out.signal;
    } else {
        out.passOn = 1; // wait4 without WUNTRACED reports only these two
    }
    return out;
}

FaultNumbers chooseFaults(const std::optional<std::uint64_t> &perfMinor,
                          const std::optional<std::uint64_t> &perfMajor, std::uint64_t rusageMinor,
                          std::uint64_t rusageMajor)
{
    if (perfMinor && perfMajor)
        return {"perf", *perfMinor, *perfMajor};
    return {"rusage", rusageMinor, rusageMajor};
}

FootprintVerdict judgeFootprint(const FootprintInput &in)
{
    std::optional<std::int64_t> grew =
        in.residentDeltaBytes ? in.residentDeltaBytes : in.cachedDeltaBytes;
    const char *measure = in.residentDeltaBytes ? "the file's residency" : "meminfo Cached";
    if (!grew || in.bytesTouched == 0)
        return {"unknown", "no page-cache numbers, or nothing touched"};
    const auto touched = static_cast<std::int64_t>(in.bytesTouched);
    const std::string growth =
        fmt::format("{} grew by {} kB for {} kB touched", measure, *grew / 1024, touched / 1024);
    if (in.dax) {
        if (*grew * 8 < touched)
            return {"no_page_cache", "DAX: no page-cache growth (" + growth + ")"};
        return {"dax_but_cache_grew",
                "DAX, yet " + growth + ": other activity, or the file is not served by DAX"};
    }
    if (*grew * 4 >= touched * 3)
        return {"page_cache", "not DAX: the page cache grew by the bytes touched (" + growth + ")"};
    return {"cache_not_grown",
            "not DAX, yet " + growth + ": already cached, or reclaimed under memory pressure"};
}

FootprintVerdict
combineFootprints(const std::vector<std::pair<std::string, FootprintVerdict>> &phases)
{
    if (phases.empty())
        return {"unknown", "no phase ran"};
    bool same = true;
    for (const auto &p : phases)
        same = same && p.second.code == phases.front().second.code;
    if (same)
        return {phases.front().second.code,
                fmt::format("every phase: {}", phases.front().second.code)};
    std::string parts;
    for (const auto &p : phases)
        parts += fmt::format("{}{}: {}", parts.empty() ? "" : ", ", p.first, p.second.code);
    return {"mixed", parts};
}

Result<std::uint64_t> parseExerciseSize(std::string_view text)
{
    std::string_view digits = text;
    std::uint64_t scale = 1;
    if (!digits.empty()) {
        switch (digits.back()) {
        case 'K':
        case 'k':
            scale = 1ull << 10;
            break;
        case 'M':
        case 'm':
            scale = 1ull << 20;
            break;
        case 'G':
        case 'g':
            scale = 1ull << 30;
            break;
        default:
            break;
        }
        if (scale != 1)
            digits.remove_suffix(1);
    }
    auto n = parseU64(digits);
    if (!n || *n == 0)
        return failf(EINVAL, "size '{}': want a positive number of bytes, with K, M or G", text);
    if (*n > (1ull << 50) / scale)
        return failf(ERANGE, "size '{}' is too large", text);
    std::uint64_t bytes = *n * scale;
    return (bytes + kPmdBytes - 1) / kPmdBytes * kPmdBytes;
}

} // namespace daxprobe
