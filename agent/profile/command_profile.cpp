#include "agent/profile/command_profile.h"

#include <cerrno>
#include <csignal>
#include <ctime>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/monotonic.h"
#include "base/unique_fd.h"
#include "probes/readers/dax_evidence.h"

namespace daxprobe
{

namespace
{

double seconds(const timeval &tv)
{
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
}

Result<std::pair<UniqueFD, UniqueFD>> makePipe()
{
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
        return failf(errno, "pipe2");
    return std::make_pair(UniqueFD(fds[0]), UniqueFD(fds[1]));
}

void readSystem(const Root &root, Meminfo &meminfo, std::string &meminfoError, Vmstat &vmstat,
                std::string &vmstatError)
{
    storeOrDescribe(root.readFile("proc/meminfo").and_then(parseMeminfo), meminfo, meminfoError);
    storeOrDescribe(root.readFile("proc/vmstat").and_then(parseVmstat), vmstat, vmstatError);
}

// Restores SIGINT and SIGQUIT however the wait ends.
class IgnoreInterrupts
{
  public:
    IgnoreInterrupts()
    {
        struct sigaction ign {
        };
        ign.sa_handler = SIG_IGN;
        ::sigaction(SIGINT, &ign, &oldInt_);
        ::sigaction(SIGQUIT, &ign, &oldQuit_);
    }
    ~IgnoreInterrupts()
    {
        ::sigaction(SIGINT, &oldInt_, nullptr);
        ::sigaction(SIGQUIT, &oldQuit_, nullptr);
    }
    IgnoreInterrupts(const IgnoreInterrupts &) = delete;
    IgnoreInterrupts &operator=(const IgnoreInterrupts &) = delete;

  private:
    struct sigaction oldInt_ {
    };
    struct sigaction oldQuit_ {
    };
};

// The files' residency before the command: a DAX file has none to measure.
std::vector<FileResidency> residencyBefore(const std::vector<std::string> &paths)
{
    std::vector<FileResidency> files;
    for (const auto &path : paths) {
        FileResidency f;
        f.path = path;
        StatxEvidence sx = statxDax(path);
        f.dax = sx.observed() && sx.dax;
        f.before = measureResidency(path, f.dax);
        files.push_back(std::move(f));
    }
    return files;
}

// The child: only async-signal-safe calls until exec; no destructors. Waits
// for the parent's byte on `go`, execs, and reports a failed exec's errno on
// `status`.
[[noreturn]] void execWhenReleased(int goRead, int goWrite, int status, char *const argv[])
{
    ::close(goWrite);
    char byte = 0;
    ssize_t n;
    do
        n = ::read(goRead, &byte, 1);
    while (n < 0 && errno == EINTR);
    if (n != 1)
        ::_exit(127); // the parent gave up before releasing us
    ::execvp(argv[0], argv);
    int err = errno;
    (void)!::write(status, &err, sizeof(err));
    ::_exit(err == ENOENT ? 127 : 126);
}

// Releases the child (its counters are attached) and sleeps in wait4 until
// it ends, ^C and ^\ left to the command.
int releaseAndWait(pid_t pid, UniqueFD &goWrite, CommandRun &run, rusage &ru)
{
    int status = 0;
    IgnoreInterrupts ignore;
    double start = monotonicSeconds();
    char byte = 'x';
    (void)!::write(goWrite.get(), &byte, 1);
    goWrite.reset();
    pid_t got;
    do
        got = ::wait4(pid, &status, 0, &ru);
    while (got < 0 && errno == EINTR);
    run.wallSeconds = monotonicSeconds() - start;
    if (got < 0)
        run.error = Error{errno, "wait4"}.describe();
    return status;
}

// What the ended command cost, from wait4; `statusRead` holds an errno
// only if exec failed.
void recordEnd(CommandRun &run, int status, const rusage &ru, const UniqueFD &statusRead)
{
    int err = 0;
    if (::read(statusRead.get(), &err, sizeof(err)) == sizeof(err))
        run.execErrno = err;
    run.end = decodeWaitStatus(status);
    run.userSeconds = seconds(ru.ru_utime);
    run.systemSeconds = seconds(ru.ru_stime);
    run.peakRssKb = ru.ru_maxrss;
    run.rusageMinor = static_cast<std::uint64_t>(ru.ru_minflt);
    run.rusageMajor = static_cast<std::uint64_t>(ru.ru_majflt);
}

} // namespace

CommandRun profileCommand(const Root &root, const CommandProfileOptions &options)
{
    CommandRun run;
    run.argv = options.argv;
    if (options.argv.empty()) {
        run.error = "no command";
        return run;
    }
    run.files = residencyBefore(options.paths);

    auto go = makePipe();
    auto execStatus = makePipe();
    if (!go || !execStatus) {
        run.error = (!go ? go.error() : execStatus.error()).describe();
        return run;
    }
    auto &[goRead, goWrite] = *go;
    auto &[statusRead, statusWrite] = *execStatus;
    std::vector<char *> argv;
    for (const auto &a : options.argv)
        argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);

    pid_t pid = ::fork();
    if (pid < 0) {
        run.error = Error{errno, "fork"}.describe();
        return run;
    }
    if (pid == 0)
        execWhenReleased(goRead.get(), goWrite.get(), statusWrite.get(), argv.data());
    goRead.reset();
    statusWrite.reset();

    std::string noPerf = options.noPerf ? "perf not used (--no-perf)" : "";
    FaultCounters counters =
        FaultCounters::open(root, PerfTarget{pid, /*inherit=*/true, /*enableOnExec=*/true}, noPerf);
    run.perfCounting = counters.perfCounting();
    readSystem(root, run.meminfoBefore, run.meminfoError, run.vmstatBefore, run.vmstatError);

    rusage ru{};
    int status = releaseAndWait(pid, goWrite, run, ru);
    std::string meminfoError, vmstatError;
    readSystem(root, run.meminfoAfter, meminfoError, run.vmstatAfter, vmstatError);
    if (run.meminfoError.empty())
        run.meminfoError = meminfoError;
    if (run.vmstatError.empty())
        run.vmstatError = vmstatError;
    run.counts = counters.read();
    // The child has ended.
    recordEnd(run, status, ru, statusRead);
    for (auto &f : run.files)
        f.after = measureResidency(f.path, f.dax);
    return run;
}

} // namespace daxprobe
