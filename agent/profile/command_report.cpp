#include "agent/profile/command_report.h"

#include <cstring>

#include <fmt/format.h>

#include "agent/fault_json.h"
#include "agent/json_fields.h"
#include "agent/text_fields.h"
#include <fmt/ranges.h>

#include "probes/judges/dax_rss.h"
#include "probes/judges/footprint.h"

namespace daxprobe
{

namespace
{

using json = nlohmann::json;

const char *residencyMethod(const FileResidency &f)
{
    if (f.dax)
        return "not_applicable_dax";
    return f.before.method.empty() ? "mincore" : f.before.method.c_str();
}

json residentBytes(const FileResidency &f, const Residency &r)
{
    return !f.dax && r.observed() ? json(r.residentBytes) : json(nullptr);
}

FaultNumbers faultNumbers(const CommandRun &run)
{
    return chooseFaults(run.counts.minorFaults, run.counts.majorFaults, run.rusageMinor,
                        run.rusageMajor);
}

std::string signedKb(const std::optional<std::int64_t> &v)
{
    return v ? fmt::format("{:+} kB", *v) : "?";
}

} // namespace

json commandJson(const CommandRun &run)
{
    json cmd = {{"argv", run.argv}};
    if (run.end.signal)
        cmd["signal"] = *run.end.signal;
    else
        cmd["exit_status"] = run.end.exitStatus.value_or(commandExitCode(run));
    cmd["error"] = errorOrNull(run.error);
    cmd["exec_error"] = run.execErrno
                            ? json(Error{run.execErrno, "execvp " + run.argv.front()}.describe())
                            : json(nullptr);
    cmd["wall_seconds"] = run.wallSeconds;
    cmd["user_seconds"] = run.userSeconds;
    cmd["system_seconds"] = run.systemSeconds;
    cmd["peak_rss_kb"] = run.peakRssKb;
    if (auto n = judgeDaxRss(run.counts, static_cast<std::uint64_t>(run.peakRssKb)))
        cmd["peak_rss_without_dax"] = {{"dax_faults", n->daxFaults},
                                       {"mapped_bytes_up_to", n->mappedBytesUpTo},
                                       {"note", n->text}};
    else
        cmd["peak_rss_without_dax"] = nullptr;

    cmd["faults"] = faultsJson(faultNumbers(run), run.counts);
    cmd["faults"]["rusage_minor"] = run.rusageMinor;
    cmd["faults"]["rusage_major"] = run.rusageMajor;

    json vm = json::object();
    for (const auto &[name, delta] :
         vmstatDelta(run.vmstatBefore, run.vmstatAfter, vmstatFaultCounters()))
        vm[name] = delta;
    cmd["vmstat_delta"] = vm;
    cmd["vmstat_error"] = errorOrNull(run.vmstatError);

    json files = json::array();
    for (const auto &file : run.files)
        files.push_back(
            {{"path", file.path},
             {"dax", file.dax},
             {"method", residencyMethod(file)},
             {"resident_bytes_before", residentBytes(file, file.before)},
             {"resident_bytes_after", residentBytes(file, file.after)},
             {"error", errorOrNull(file.dax || file.after.observed() ? "" : file.after.text)}});
    cmd["page_cache"] = {
        {"cached_kb_before", opt(meminfoKb(run.meminfoBefore, "Cached"))},
        {"cached_kb_after", opt(meminfoKb(run.meminfoAfter, "Cached"))},
        {"cached_kb_delta", opt(meminfoDeltaKb(run.meminfoBefore, run.meminfoAfter, "Cached"))},
        {"buffers_kb_delta", opt(meminfoDeltaKb(run.meminfoBefore, run.meminfoAfter, "Buffers"))},
        {"mem_available_kb_after", opt(meminfoKb(run.meminfoAfter, "MemAvailable"))},
        {"meminfo_error", errorOrNull(run.meminfoError)},
        {"files", files}};
    return cmd;
}

std::string commandText(const CommandRun &run)
{
    std::string out = fmt::format("command       {}\n", fmt::join(run.argv, " "));
    if (!run.error.empty())
        return out + fmt::format("error         {}\n", run.error);
    if (run.execErrno)
        out += fmt::format("error         {}\n",
                           Error{run.execErrno, "execvp " + run.argv.front()}.describe());
    out += run.end.signal
               ? fmt::format("ended         killed by signal {} ({})\n", *run.end.signal,
                             ::strsignal(*run.end.signal))
               : fmt::format("ended         exit status {}\n", run.end.exitStatus.value_or(-1));
    out += fmt::format("time          {:.3f} s wall, {:.3f} s user, {:.3f} s system\n",
                       run.wallSeconds, run.userSeconds, run.systemSeconds);
    out += fmt::format("peak RSS      {} kB (largest of the command and its waited-for children)\n",
                       run.peakRssKb);
    if (auto n = judgeDaxRss(run.counts, static_cast<std::uint64_t>(run.peakRssKb)))
        out += fmt::format("              {}\n", n->text);
    FaultNumbers f = faultNumbers(run);
    const FaultCounts &c = run.counts;
    if (f.source == "perf")
        out += fmt::format(
            "page faults   {} minor, {} major (perf, from exec on, children included{})\n", f.minor,
            f.major, c.perfNote.empty() ? "" : "; " + c.perfNote);
    else
        out +=
            fmt::format("page faults   {} minor, {} major (fallback: rusage of the command and the "
                        "children it waited for; perf: {})\n",
                        f.minor, f.major, run.counts.perfError);
    if (c.pmdFaults || c.pteFaults)
        out += fmt::format("fs_dax        {} PMD ({} fell back to 4 KiB), {} PTE\n",
                           countOr(c.pmdFaults), countOr(c.pmdFallbacks), countOr(c.pteFaults));
    else
        out += fmt::format("fs_dax        not counted: {}\n", c.tracepointError);
    auto vm = vmstatDelta(run.vmstatBefore, run.vmstatAfter, {"pgfault", "pgmajfault"});
    if (vm.size() == 2)
        out += fmt::format("vmstat        pgfault {:+}, pgmajfault {:+} (whole system)\n",
                           vm["pgfault"], vm["pgmajfault"]);
    out += fmt::format("page cache    Cached {}, Buffers {} (whole system)\n",
                       signedKb(meminfoDeltaKb(run.meminfoBefore, run.meminfoAfter, "Cached")),
                       signedKb(meminfoDeltaKb(run.meminfoBefore, run.meminfoAfter, "Buffers")));
    for (const auto &file : run.files) {
        if (file.dax)
            out += fmt::format("  {}  DAX: no page cache to measure\n", file.path);
        else if (!file.before.observed() || !file.after.observed())
            out += fmt::format("  {}  {}\n", file.path,
                               file.after.observed() ? file.before.text : file.after.text);
        else
            out +=
                fmt::format("  {}  {} -> {} bytes resident ({})\n", file.path,
                            file.before.residentBytes, file.after.residentBytes, file.after.method);
    }
    return out;
}

int commandExitCode(const CommandRun &run)
{
    if (!run.error.empty())
        return 2;
    return run.end.passOn;
}

} // namespace daxprobe
