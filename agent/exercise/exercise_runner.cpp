#include "agent/exercise/exercise_runner.h"

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <ctime>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <functional>
#include <vector>

#include <fmt/format.h>

#include "agent/monotonic.h"
#include "base/page_walk.h"
#include "base/safe_files.h"
#include "base/unique_fd.h"
#include "base/unique_mapping.h"
#include "probes/readers/dax_evidence.h"

namespace daxprobe
{

namespace
{

constexpr std::size_t kChunk = 1 << 20;

volatile std::sig_atomic_t gStopSignal = 0;

extern "C" void onStopSignal(int sig)
{
    gStopSignal = sig;
}

// While the exercise runs, SIGINT, SIGTERM and SIGHUP only note themselves:
// the phase under way ends, the file is removed, then the run reports the
// interruption (a signal's default action would leave the file behind).
class DeferStopSignals
{
  public:
    DeferStopSignals()
    {
        gStopSignal = 0;
        struct sigaction sa {
        };
        sa.sa_handler = onStopSignal;
        sa.sa_flags = SA_RESTART;
        ::sigemptyset(&sa.sa_mask);
        for (std::size_t i = 0; i < kSignals.size(); ++i)
            ::sigaction(kSignals[i], &sa, &old_[i]);
    }
    ~DeferStopSignals()
    {
        for (std::size_t i = 0; i < kSignals.size(); ++i)
            ::sigaction(kSignals[i], &old_[i], nullptr);
    }
    DeferStopSignals(const DeferStopSignals &) = delete;
    DeferStopSignals &operator=(const DeferStopSignals &) = delete;

  private:
    static constexpr std::array<int, 3> kSignals{SIGINT, SIGTERM, SIGHUP};
    std::array<struct sigaction, 3> old_{};
};

bool stopRequested(ExerciseRun &run)
{
    if (gStopSignal == 0)
        return false;
    run.error = fmt::format("interrupted by signal {} ({})", static_cast<int>(gStopSignal),
                            ::strsignal(gStopSignal));
    return true;
}

// Removes the exercise file when the run ends, whichever way it ends: only
// the inode created, through the directory fd held since its creation, so a
// parent renamed or a name replaced meanwhile is never followed or removed.
class RemoveOnExit
{
  public:
    RemoveOnExit(ExerciseRun &run, const ParentDir &parent, const CreatedFile &file)
        : run_(run), parent_(parent), file_(file)
    {
    }
    ~RemoveOnExit()
    {
        auto r = removeCreated(parent_.dir.get(), parent_.name, file_.id);
        if (r) {
            run_.removed = true;
            if (!sameDirectory())
                run_.removeNote = "its directory was moved while it ran: the file removed is "
                                  "the one it created, not what the path names now";
            outlived();
        } else if (r.error().code == ESTALE)
            run_.removeError = fmt::format(
                "{}: the name no longer leads to the file exercise created (inode {}), so "
                "nothing was removed; the created file may be left under another name",
                run_.path, file_.id.ino);
        else
            run_.removeError = fmt::format("{}: {}", run_.path, r.error().describe());
    }
    RemoveOnExit(const RemoveOnExit &) = delete;
    RemoveOnExit &operator=(const RemoveOnExit &) = delete;

  private:
    // A hard link made to the file while it ran (fs.protected_hardlinks=0)
    // keeps the inode alive after our name is gone: the name was removed,
    // the file was not. Its data is ours to drop, so the size goes; the
    // other name, which we cannot find, is reported.
    void outlived()
    {
        struct stat st {
        };
        if (::fstat(file_.fd.get(), &st) != 0 || st.st_nlink == 0)
            return;
        const bool emptied = ::ftruncate(file_.fd.get(), 0) == 0;
        run_.removed = false;
        run_.removeError = fmt::format(
            "{}: its name was removed, but the file exercise created (inode {}) has {} other "
            "hard link(s) made while it ran, so it was not removed; {}",
            run_.path, file_.id.ino, st.st_nlink,
            emptied ? "its data was truncated to 0 bytes" : "its data could not be truncated");
    }

  private:
    // Does the path still lead to the directory the file was created in?
    bool sameDirectory() const
    {
        auto now = openParent(run_.path);
        struct stat a {
        }, b{};
        return now && ::fstat(now->dir.get(), &a) == 0 && ::fstat(parent_.dir.get(), &b) == 0 &&
               a.st_dev == b.st_dev && a.st_ino == b.st_ino;
    }

    ExerciseRun &run_;
    const ParentDir &parent_;
    const CreatedFile &file_;
};

// A shared mapping of the whole file at a 2 MiB-aligned address: with the
// file offset 0 also aligned, every 2 MiB of it can be one PMD entry.
Result<UniqueMapping> mapAligned(int fd, std::size_t size, int prot)
{
    UniqueMapping reserve(::mmap(nullptr, size + kPmdBytes, PROT_NONE,
                                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0),
                          size + kPmdBytes);
    if (!reserve)
        return failf(errno, "mmap reserve {} bytes", size + kPmdBytes);
    auto base = reinterpret_cast<std::uintptr_t>(reserve.get());
    std::uintptr_t aligned = (base + kPmdBytes - 1) & ~(kPmdBytes - 1);
    void *addr =
        ::mmap(reinterpret_cast<void *>(aligned), size, prot, MAP_SHARED | MAP_FIXED, fd, 0);
    if (addr == MAP_FAILED)
        return failf(errno, "mmap {} bytes", size);
    // The file mapping replaced the middle of the reservation: unmap the ends.
    auto [start, length] = reserve.release();
    if (aligned > base)
        ::munmap(start, aligned - base);
    std::uintptr_t end = base + length;
    if (end > aligned + size)
        ::munmap(reinterpret_cast<void *>(aligned + size), end - (aligned + size));
    return UniqueMapping(addr, size);
}

// Written data throughout (not unwritten extents): reads then come from the
// medium, not from zero pages for holes.
Result<void> fill(int fd, std::uint64_t size)
{
    std::vector<unsigned char> chunk(kChunk, 0x5a);
    for (std::uint64_t off = 0; off < size; off += kChunk) {
        ssize_t n = ::pwrite(fd, chunk.data(), kChunk, static_cast<off_t>(off));
        if (n != static_cast<ssize_t>(kChunk))
            return failf(n < 0 ? errno : EIO, "pwrite at {}", off);
    }
    return {};
}

Result<void> dropCache(int fd)
{
    if (::fsync(fd) != 0)
        return failf(errno, "fsync");
    if (int err = ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))
        return failf(err, "posix_fadvise DONTNEED");
    return {};
}

std::optional<std::int64_t> cachedKb(const Root &root)
{
    auto m = root.readFile("proc/meminfo").and_then(parseMeminfo);
    return m ? meminfoKb(*m, "Cached") : std::nullopt;
}

Vmstat vmstatNow(const Root &root)
{
    auto v = root.readFile("proc/vmstat").and_then(parseVmstat);
    return v ? *v : Vmstat{};
}

// Runs one phase between measurements; `touch` is all the counters see.
ExercisePhase measure(const Root &root, const ExerciseRun &run, const ExerciseOptions &options,
                      const char *name, int fd, const std::function<Result<void>()> &touch)
{
    ExercisePhase p;
    p.name = name;
    p.bytes = run.sizeBytes;
    if (auto d = dropCache(fd); !d) {
        p.error = d.error().describe();
        return p;
    }
    if (!run.dax())
        p.before = measureResidency(fd, run.path, false);
    Vmstat vmBefore = vmstatNow(root);
    p.cachedKbBefore = cachedKb(root);
    FaultCounters counters =
        FaultCounters::open(root, PerfTarget{}, options.noPerf ? "perf not used (--no-perf)" : "");
    rusage ruBefore{}, ruAfter{};
    ::getrusage(RUSAGE_SELF, &ruBefore);
    double start = monotonicSeconds();
    counters.enable();
    auto done = touch();
    counters.disable();
    p.seconds = monotonicSeconds() - start;
    ::getrusage(RUSAGE_SELF, &ruAfter);
    p.cachedKbAfter = cachedKb(root);
    p.vmstatDelta = vmstatDelta(vmBefore, vmstatNow(root), {"pgfault", "pgmajfault"});
    p.counts = counters.read();
    p.rusageMinor = static_cast<std::uint64_t>(ruAfter.ru_minflt - ruBefore.ru_minflt);
    p.rusageMajor = static_cast<std::uint64_t>(ruAfter.ru_majflt - ruBefore.ru_majflt);
    if (!done)
        p.error = done.error().describe();
    if (!run.dax())
        p.after = measureResidency(fd, run.path, false);

    FootprintInput in;
    in.dax = run.dax();
    in.bytesTouched = p.bytes;
    if (p.cachedKbBefore && p.cachedKbAfter)
        in.cachedDeltaBytes = (*p.cachedKbAfter - *p.cachedKbBefore) * 1024;
    if (!run.dax() && p.before.observed() && p.after.observed())
        in.residentDeltaBytes = static_cast<std::int64_t>(p.after.residentBytes) -
                                static_cast<std::int64_t>(p.before.residentBytes);
    p.footprint = judgeFootprint(in);
    return p;
}

// A walk that raised SIGBUS failed at that page (a poisoned page: a pmem
// media error), and the run goes on to remove its file.
Result<void> walked(const PageWalk &w)
{
    if (w.sigbusOffset)
        return failf(EIO, "SIGBUS at byte {} of the mapping (a poisoned page: a media error)",
                     *w.sigbusOffset);
    return {};
}

// The workload on the created file; `run` collects what it measured.
void exerciseFile(const Root &root, const ExerciseOptions &options, const UniqueFD &fd,
                  ExerciseRun &run)
{
    if (int err = ::posix_fallocate(fd.get(), 0, static_cast<off_t>(run.sizeBytes))) {
        run.error = Error{err, "posix_fallocate"}.describe();
        return;
    }
    if (auto f = fill(fd.get(), run.sizeBytes); !f) {
        run.error = f.error().describe();
        return;
    }
    if (stopRequested(run))
        return;
    run.statx = statxDax(fd.get(), run.path); // the file made, whatever the name is now

    const std::size_t size = run.sizeBytes;
    const long page = ::sysconf(_SC_PAGESIZE);
    std::vector<unsigned char> buffer(kChunk, 0); // touched now, so its faults are not the read's

    std::vector<std::pair<const char *, std::function<Result<void>()>>> phases = {
        {"read",
         [&]() -> Result<void> {
             for (std::uint64_t off = 0; off < size; off += kChunk)
                 if (::pread(fd.get(), buffer.data(), kChunk, static_cast<off_t>(off)) !=
                     static_cast<ssize_t>(kChunk))
                     return failf(errno ? errno : EIO, "pread at {}", off);
             return {};
         }},
        {"mmap_read",
         [&]() -> Result<void> {
             auto m = mapAligned(fd.get(), size, PROT_READ);
             if (!m)
                 return tl::unexpected(m.error());
             return walked(
                 touchPages(m->get(), size, static_cast<std::size_t>(page), PageTouch::Read));
         }},
        {"mmap_write",
         [&]() -> Result<void> {
             auto m = mapAligned(fd.get(), size, PROT_READ | PROT_WRITE);
             if (!m)
                 return tl::unexpected(m.error());
             if (auto w = walked(
                     touchPages(m->get(), size, static_cast<std::size_t>(page), PageTouch::Fill));
                 !w)
                 return w;
             if (::msync(m->get(), size, MS_SYNC) != 0)
                 return failf(errno, "msync");
             return {};
         }},
    };
    std::vector<std::pair<std::string, FootprintVerdict>> verdicts;
    for (auto &[name, touch] : phases) {
        run.phases.push_back(measure(root, run, options, name, fd.get(), touch));
        const ExercisePhase &p = run.phases.back();
        if (!p.error.empty()) {
            run.error = std::string(name) + ": " + p.error;
            break;
        }
        verdicts.emplace_back(name, p.footprint);
        if (stopRequested(run))
            break;
    }
    run.footprint = combineFootprints(verdicts);
}

} // namespace

ExerciseRun runExercise(const Root &root, const ExerciseOptions &options)
{
    ExerciseRun run;
    run.path = options.path;
    run.sizeBytes = options.sizeBytes;
    DeferStopSignals defer; // from before the file exists until after it is gone
    auto parent = openParent(run.path);
    if (!parent) {
        run.error = parent.error().describe();
        return run;
    }
    auto created = createExclusive(parent->dir.get(), parent->name, O_RDWR, 0600);
    if (!created) {
        run.usageError = created.error().code == EEXIST;
        run.error = run.usageError
                        ? run.path + " exists: exercise only creates (and removes) its own file"
                        : Error{created.error().code, "create " + run.path}.describe();
        return run;
    }
    run.created = true;
    {
        RemoveOnExit remove(run, *parent,
                            *created); // records into run: keep it out of the return
        exerciseFile(root, options, created->fd, run);
    }
    return run;
}

} // namespace daxprobe
