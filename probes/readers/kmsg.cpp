#include "probes/readers/kmsg.h"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <memory>
#include <optional>
#include <sys/klog.h>
#include <sys/stat.h>
#include <unistd.h>

#include "probes/readers/mount_lines.h"
#include "probes/readers/text_util.h"

namespace daxprobe
{

namespace
{

// syslog(2) actions (glibc names none of them).
constexpr int kSyslogActionReadAll = 3;
constexpr int kSyslogActionSizeBuffer = 10;

} // namespace

namespace
{

// "XFS (pmem0): ..." and "EXT4-fs (pmem0): ..." name the device in parentheses.
void setDevice(KmsgRecord &out, std::string_view msg)
{
    out.device.clear();
    auto open = msg.find(" (");
    auto close = msg.find("):");
    if (open != std::string_view::npos && close != std::string_view::npos && close > open + 2 &&
        close - open < 40)
        out.device = std::string(msg.substr(open + 2, close - open - 2));
}

char asciiLower(char c)
{
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c + ('a' - 'A')) : c;
}

// `needle` (lower case) at m[i], ASCII case-insensitively.
bool matchesAt(std::string_view m, std::size_t i, std::string_view needle)
{
    if (m.size() - i < needle.size())
        return false;
    for (std::size_t k = 0; k < needle.size(); ++k)
        if (asciiLower(m[i + k]) != needle[k])
            return false;
    return true;
}

} // namespace

bool parseKmsgRecord(std::string_view line, KmsgRecord &out)
{
    auto semi = line.find(';');
    if (semi == std::string_view::npos || line.empty() || line.front() == ' ')
        return false;
    auto f = splitFields(line.substr(0, semi), ',');
    if (f.size() < 3)
        return false;
    auto prio = parseU64(f[0]);
    auto seq = parseU64(f[1]);
    auto usec = parseU64(f[2]);
    if (!prio || !seq || !usec)
        return false;
    out.level = static_cast<unsigned>(*prio & 7);
    out.seq = *seq;
    out.usec = *usec;
    std::string_view msg = line.substr(semi + 1);
    if (auto nl = msg.find('\n'); nl != std::string_view::npos)
        msg = msg.substr(0, nl);
    out.message = std::string(msg);
    setDevice(out, msg);
    return true;
}

bool parseSyslogLine(std::string_view line, std::uint64_t index, KmsgRecord &out)
{
    if (line.size() < 3 || line.front() != '<')
        return false;
    auto gt = line.find('>');
    if (gt == std::string_view::npos)
        return false;
    auto prio = parseU64(line.substr(1, gt - 1));
    if (!prio)
        return false;
    std::string_view rest = line.substr(gt + 1);
    std::uint64_t usec = 0;
    // "[    4.170183] " with printk.time on; then "[    T1] " with the caller id.
    for (int group = 0; group < 2 && !rest.empty() && rest.front() == '['; ++group) {
        auto close = rest.find(']');
        if (close == std::string_view::npos)
            return false;
        std::string_view inside = rest.substr(1, close - 1);
        while (!inside.empty() && inside.front() == ' ')
            inside.remove_prefix(1);
        if (group == 0) {
            auto dot = inside.find('.');
            auto sec = parseU64(inside.substr(0, dot));
            auto frac = dot == std::string_view::npos ? std::optional<std::uint64_t>(0)
                                                      : parseU64(inside.substr(dot + 1));
            if (sec && frac)
                usec = *sec * 1000000 + *frac;
            else if (inside.empty() || inside.front() != 'T')
                return false; // neither a time nor a caller id
        }
        rest.remove_prefix(close + 1);
        if (!rest.empty() && rest.front() == ' ')
            rest.remove_prefix(1);
    }
    out.level = static_cast<unsigned>(*prio & 7);
    out.seq = index;
    out.usec = usec;
    out.message = std::string(rest);
    setDevice(out, rest);
    return true;
}

// One pass over the message, dispatching on the needles' first letters: a
// search per needle with std::tolower() per byte was a tenth of a one-shot
// check's CPU (it runs over the whole kernel log). "libnvdimm" holds "nvdimm".
bool isDaxRelevant(const KmsgRecord &record)
{
    std::string_view m = record.message;
    for (std::size_t i = 0; i < m.size(); ++i) {
        switch (asciiLower(m[i])) {
        case 'd':
            if (matchesAt(m, i, "dax"))
                return true;
            break;
        case 'p':
            if (matchesAt(m, i, "pmem"))
                return true;
            break;
        case 'n':
            if (matchesAt(m, i, "nfit") || matchesAt(m, i, "nvdimm"))
                return true;
            break;
        case 'c':
            if (matchesAt(m, i, "cxl"))
                return true;
            break;
        default:
            break;
        }
    }
    return false;
}

namespace
{

void keepRecord(KmsgFacts &facts, KmsgRecord &&r, std::size_t maxRecords)
{
    // Mount start/end lines of any device too: they tell which mount attempt
    // a DAX line belongs to (judges/mount_history.h).
    noteBootMemory(facts.bootMemory, r.message);
    if (!(isDaxRelevant(r) || isMountLifecycle(r.message)))
        return;
    if (facts.records.size() >= maxRecords)
        facts.records.erase(facts.records.begin()); // the newest matter most
    facts.records.push_back(std::move(r));
}

void keep(KmsgFacts &facts, std::string_view line, std::size_t maxRecords)
{
    KmsgRecord r;
    if (parseKmsgRecord(line, r))
        keepRecord(facts, std::move(r), maxRecords);
}

// The running kernel's whole log in one syslog(2) call, instead of one
// read() of /dev/kmsg per record (~350 system calls in a small guest). The
// same records and rights (CAP_SYSLOG under dmesg_restrict); the kernel's
// sequence numbers are not in this format (seq is the position instead).
bool readSyslogAll(KmsgFacts &facts, std::size_t maxRecords)
{
    int size = ::klogctl(kSyslogActionSizeBuffer, nullptr, 0);
    if (size <= 0)
        return false;
    // Not zero-filled: only the pages the kernel writes are touched.
    std::unique_ptr<char[]> buf(new char[static_cast<std::size_t>(size)]);
    int n = ::klogctl(kSyslogActionReadAll, buf.get(), size);
    if (n < 0)
        return false;
    std::uint64_t index = 0;
    for (auto line : splitLines(std::string_view(buf.get(), static_cast<std::size_t>(n)))) {
        KmsgRecord r;
        if (parseSyslogLine(line, index++, r))
            keepRecord(facts, std::move(r), maxRecords);
    }
    facts.observe();
    return true;
}

// Reads the records available now from a live /dev/kmsg fd into `facts`;
// false (and `facts` failed) on a read error other than "no more for now".
bool drainDevice(const Root &root, int fd, KmsgFacts &facts, std::size_t maxRecords)
{
    // Each read() returns exactly one record; EPIPE means the ring buffer
    // overwrote records we had not read yet, which is fine: carry on.
    std::string captured;
    char buf[8192];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof(buf));
        if (n < 0) {
            if (errno == EINTR || errno == EPIPE)
                continue;
            if (errno != EAGAIN) {
                facts.fail(Error{errno, "read /dev/kmsg"}.describe());
                return false;
            }
            break;
        }
        if (n == 0)
            break;
        std::string_view record(buf, static_cast<std::size_t>(n));
        auto nl = record.find('\n');
        std::string_view first = record.substr(0, nl);
        keep(facts, first, maxRecords);
        if (root.recording()) { // the whole log only when a capture wants it
            captured.append(first);
            captured.push_back('\n');
        }
    }
    facts.observe();
    if (root.recording())
        root.noteRead("dev/kmsg", captured);
    return true;
}

// Opens dev/kmsg; a captured file is read whole into `facts` (and no fd kept).
Result<UniqueFD> openKmsg(const Root &root, KmsgFacts &facts, std::size_t maxRecords)
{
    // The live log is a character device; a capture holds it as a file.
    auto opened = root.openForRead("dev/kmsg", Root::kRegular | Root::kCharDevice);
    if (!opened)
        return opened;
    struct stat st {
    };
    if (::fstat(opened->get(), &st) == 0 && S_ISCHR(st.st_mode))
        return opened;
    auto text = root.readFile("dev/kmsg", 16 << 20);
    if (!text)
        return tl::unexpected(text.error());
    facts.observe();
    for (auto line : splitLines(*text))
        keep(facts, line, maxRecords);
    return UniqueFD();
}

} // namespace

KmsgFacts readKmsg(const Root &root, std::size_t maxRecords)
{
    KmsgFacts facts;
    // The system's own log, not a capture's: one system call. A capture
    // records /dev/kmsg's records verbatim, and a confined root has its own.
    if (!root.confined() && !root.recording() && readSyslogAll(facts, maxRecords))
        return facts;
    auto fd = openKmsg(root, facts, maxRecords);
    if (!fd) {
        facts.fail(fd.error().describe());
        return facts;
    }
    if (fd->isValid())
        drainDevice(root, fd->get(), facts, maxRecords);
    return facts;
}

KmsgFacts KmsgReader::read(const Root &root)
{
    if (fd_.isValid()) {
        ++resumed_;
    } else {
        kept_ = KmsgFacts{};
        auto fd = openKmsg(root, kept_, maxRecords_);
        if (!fd) {
            kept_.fail(fd.error().describe());
            return kept_;
        }
        if (!fd->isValid())
            return kept_; // a captured file: nothing to keep open
        fd_ = std::move(*fd);
    }
    if (!drainDevice(root, fd_.get(), kept_, maxRecords_))
        fd_.reset(); // reopen (and reread from the start) next time
    return kept_;
}

} // namespace daxprobe
