// libFuzzer target: the parsers of kernel and user-controlled text that the
// guest reads (issue 11, item 9). The first byte picks the parser, so one
// target and one corpus cover mountinfo (mount points are chosen by anyone
// who can mount), the ACPI NFIT (firmware), kmsg records and vmstat/meminfo.
// Each parser must return, never crash, hang or read out of bounds; the
// text helpers' output must stay printable and shell-quoted as promised.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kmsg.h"
#include "meminfo.h"
#include "mount_history.h"
#include "mountinfo.h"
#include "nfit.h"
#include "text_util.h"
#include "vmstat.h"

using namespace daxprobe;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    if (size == 0)
        return 0;
    std::string_view in(reinterpret_cast<const char *>(data) + 1, size - 1);
    switch (data[0] % 5) {
    case 0:
        if (auto m = parseMountinfo(in))
            for (const auto &e : *m) {
                (void)daxOption(e);
                for (char c : printable(e.mountPoint))
                    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
                        __builtin_trap();
                std::string q = shellQuote(e.mountPoint);
                if (q.empty())
                    __builtin_trap();
            }
        break;
    case 1: {
        NfitInfo n = parseNfit(in);
        (void)n.valid();
        (void)n.pmemRangeCount();
        break;
    }
    case 2: {
        // Records in, attempts out: the attribution must hold for any log.
        std::vector<KmsgRecord> records;
        for (auto line : splitLines(in)) {
            KmsgRecord r;
            if (parseKmsgRecord(line, r)) {
                (void)isDaxRelevant(r);
                (void)isMountLifecycle(r.message);
                records.push_back(std::move(r));
            }
        }
        DeviceKmsg dk = attributeKmsg(records, records.empty() ? "" : records.back().device);
        if (dk.current.size() + dk.history.size() > records.size())
            __builtin_trap();
        break;
    }
    case 3:
        (void)parseVmstat(in);
        break;
    case 4:
        (void)parseMeminfo(in);
        break;
    }
    return 0;
}
