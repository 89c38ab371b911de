#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/page_residency.h"
#include "base/root.h"
#include "probes/judges/footprint.h"
#include "probes/readers/fault_counters.h"
#include "probes/readers/meminfo.h"
#include "probes/readers/vmstat.h"

namespace daxprobe
{

struct CommandProfileOptions {
    std::vector<std::string> argv;
    std::vector<std::string> paths; // files whose page-cache residency is measured before and after
    bool noPerf = false;            // rusage and vmstat only, as when perf is not permitted
};

struct FileResidency {
    std::string path;
    bool dax = false; // statx said so: no residency call at all (cachestat on DAX crashes 6.12)
    Residency before;
    Residency after;
};

// What running one command cost, for it and its children. The shell around
// fork/exec: no arithmetic here (footprint.h), no rendering (command_report.h).
struct CommandRun {
    std::vector<std::string> argv;
    std::string error; // daxprobe could not start it (pipe, fork)
    int execErrno = 0; // execvp failed in the child
    ChildEnd end;
    double wallSeconds = 0;
    double userSeconds = 0;
    double systemSeconds = 0;
    long peakRssKb = 0; // wait4's ru_maxrss
    std::uint64_t rusageMinor = 0;
    std::uint64_t rusageMajor = 0;
    bool perfCounting = false;
    FaultCounts counts;
    Meminfo meminfoBefore, meminfoAfter;
    std::string meminfoError;
    Vmstat vmstatBefore, vmstatAfter;
    std::string vmstatError;
    std::vector<FileResidency> files;
};

// Forks; the child waits on a pipe until the counters are attached to it
// (inherit, enable_on_exec: they count from its execve on, children
// included, as `perf stat` does), then execs argv[0] from PATH. The parent
// sleeps in wait4 until it ends: no polling while the command runs.
// SIGINT and SIGQUIT are ignored meanwhile, as time(1) does, so ^C stops the
// command and the report still comes.
CommandRun profileCommand(const Root &root, const CommandProfileOptions &options);

} // namespace daxprobe
