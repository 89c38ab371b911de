#include "kmsg.h"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mount_history.h"
#include "text_util.h"

namespace daxprobe {

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
    out.device.clear();
    // "XFS (pmem0): ..." and "EXT4-fs (pmem0): ..." name the device in parentheses.
    auto open = msg.find(" (");
    auto close = msg.find("):");
    if (open != std::string_view::npos && close != std::string_view::npos && close > open + 2 &&
        close - open < 40)
        out.device = std::string(msg.substr(open + 2, close - open - 2));
    return true;
}

bool isDaxRelevant(const KmsgRecord &record)
{
    std::string lower = record.message;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    for (const char *needle : {"dax", "pmem", "nfit", "nvdimm", "libnvdimm"})
        if (lower.find(needle) != std::string::npos)
            return true;
    return false;
}

namespace {

void keep(KmsgFacts &facts, std::string_view line, std::size_t maxRecords)
{
    KmsgRecord r;
    // Mount start/end lines of any device too: they tell which mount attempt
    // a DAX line belongs to (mount_history.h).
    if (!parseKmsgRecord(line, r) || !(isDaxRelevant(r) || isMountLifecycle(r.message)))
        return;
    if (facts.records.size() >= maxRecords)
        facts.records.erase(facts.records.begin()); // the newest matter most
    facts.records.push_back(std::move(r));
}

} // namespace

KmsgFacts readKmsg(const Root &root, std::size_t maxRecords)
{
    KmsgFacts facts;
    // The live log is a character device; a capture holds it as a file.
    auto opened = root.openForRead("dev/kmsg", Root::kRegular | Root::kCharDevice);
    if (!opened) {
        facts.error = opened.error().describe();
        return facts;
    }
    UniqueFD fd = std::move(*opened);
    struct stat st {};
    if (::fstat(fd.get(), &st) == 0 && !S_ISCHR(st.st_mode)) {
        auto text = root.readFile("dev/kmsg", 16 << 20);
        if (!text) {
            facts.error = text.error().describe();
            return facts;
        }
        facts.readable = true;
        for (auto line : splitLines(*text))
            keep(facts, line, maxRecords);
        return facts;
    }

    // Each read() returns exactly one record; EPIPE means the ring buffer
    // overwrote records we had not read yet, which is fine: carry on.
    std::string captured;
    char buf[8192];
    for (;;) {
        ssize_t n = ::read(fd.get(), buf, sizeof(buf));
        if (n < 0) {
            if (errno == EINTR || errno == EPIPE)
                continue;
            if (errno != EAGAIN) {
                facts.error = Error{errno, "read /dev/kmsg"}.describe();
                return facts;
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
    facts.readable = true;
    if (root.recording())
        root.noteRead("dev/kmsg", captured);
    return facts;
}

} // namespace daxprobe
