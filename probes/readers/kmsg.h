#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/evidence_state.h"
#include "base/root.h"
#include "probes/readers/boot_memory.h"

namespace daxprobe
{

// One /dev/kmsg record: "prio,seq,usec,flags;message" (dev-kmsg ABI).
struct KmsgRecord {
    unsigned level = 6;
    std::uint64_t seq = 0; // the kernel's (/dev/kmsg), or the position (syslog(2))
    std::uint64_t usec = 0;
    std::string message;
    std::string device; // "pmem0" from "XFS (pmem0): ...", when present
};

// Returns false for lines that are not records (continuation "KEY=value"
// lines, blanks, garbage).
bool parseKmsgRecord(std::string_view line, KmsgRecord &out);

// One line of syslog(2)'s SYSLOG_ACTION_READ_ALL text: "<prio>[ sec.usec]
// message" (the time only with printk.time on); `index` becomes its seq.
bool parseSyslogLine(std::string_view line, std::uint64_t index, KmsgRecord &out);

// Records that speak about DAX, pmem, the NFIT or CXL.
bool isDaxRelevant(const KmsgRecord &record);

// Observed once the log could be read (even with nothing relevant in it);
// Failed with the error otherwise, e.g. permission denied (dmesg_restrict).
struct KmsgFacts : EvidenceOutcome {
    std::vector<KmsgRecord> records; // only the relevant ones, bounded
    BounceBufferFacts bootMemory;    // from every record, relevant or not
};

// Reads dev/kmsg under the root: record by record from the live character
// device (non-blocking, until EAGAIN), or line by line from a captured file.
// On the system's own root (not confined, not capturing) the whole log comes
// in one syslog(2) call instead.
KmsgFacts readKmsg(const Root &root, std::size_t maxRecords = 256);

// The kernel log kept open between checks (the agent): each read() picks up
// where the last one stopped, so a periodic check reads only the records
// logged since, not the whole ring (/dev/kmsg hands out one record per
// read()). The relevant records seen so far are kept, bounded, newest last.
class KmsgReader
{
  public:
    explicit KmsgReader(std::size_t maxRecords = 256) : maxRecords_(maxRecords) {}

    // The facts as of now: opens dev/kmsg under `root` on first use (or after
    // an error), then reads what is new. A captured file (not a device) is
    // read whole every time, as readKmsg() does.
    KmsgFacts read(const Root &root);
    // read() calls that ended with the log open (the next one resumes).
    std::uint64_t resumed() const { return resumed_; }

  private:
    std::size_t maxRecords_;
    UniqueFD fd_;
    KmsgFacts kept_;
    std::uint64_t resumed_ = 0;
};

} // namespace daxprobe
