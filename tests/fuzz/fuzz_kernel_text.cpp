// libFuzzer target: the parsers of kernel and user-controlled text that the
// guest reads (issue 11, item 9): mountinfo (mount points are chosen by
// anyone who can mount), the ACPI NFIT and CEDT (firmware), kmsg records,
// vmstat, meminfo and the kernel's uevent datagrams (any process in the
// agent's network namespace can send on NETLINK_KOBJECT_UEVENT; the agent
// drops non-kernel senders, but the parser must not rely on that). Built
// twice over (run_fuzzers.sh):
// - kernel_text: the first byte picks the parser, so CI's one short run
//   covers all of them;
// - mountinfo, nfit, kmsg, vmstat, meminfo, cedt, uevent: KERNEL_TEXT_PARSER fixes the
//   parser, so the long run spends every execution on one parser and its
//   corpus holds plain kernel text (no selector byte).
// Each parser must return, never crash, hang or read out of bounds; the
// text helpers' output must stay printable and shell-quoted as promised.
// The unit suite replays every corpus file through fuzzKernelText()
// (tests/unit/probes/readers/test_fuzz_corpus.cpp), so a crash reproducer saved
// under tests/fuzz/corpus/ is a unit test from then on.
#include "tests/fuzz/fuzz_kernel_text.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/text_escape.h"
#include "probes/readers/cedt.h"
#include "probes/readers/kmsg.h"
#include "probes/readers/meminfo.h"
#include "probes/readers/mountinfo.h"
#include "probes/readers/nfit.h"
#include "probes/readers/text_util.h"
#include "probes/readers/uevent.h"
#include "probes/readers/vmstat.h"

namespace daxprobe
{

namespace
{

[[noreturn]] void violated()
{
    __builtin_trap();
}

void fuzzMountinfo(std::string_view in)
{
    auto m = parseMountinfo(in);
    if (!m)
        return;
    if (m->size() > splitLines(in).size())
        violated(); // one entry per line at most
    for (const auto &e : *m) {
        (void)daxOptionName(daxOption(e));
        for (char c : printable(e.mountPoint))
            if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
                violated();
        if (shellQuote(e.mountPoint).empty())
            violated();
    }
}

void fuzzNfit(std::string_view in)
{
    NfitInfo n = parseNfit(in);
    if (n.pmemRangeCount() > n.spaRanges.size())
        violated();
    // A table that does not even hold its own header is never valid.
    if (n.valid() && in.size() < 40)
        violated();
}

void fuzzCedt(std::string_view in)
{
    CedtInfo c = parseCedt(in);
    // Every structure read lies inside the table: 32 bytes a CHBS, 36 and
    // 4 per target a CFMWS, after the 36-byte header.
    std::size_t need = 36 + 32 * c.hostBridges.size();
    for (const auto &w : c.windows) {
        need += 36 + 4 * w.targets.size();
        if (w.targets.size() != w.interleaveWays || w.restrictionNames().size() > 5)
            violated();
    }
    if (need > 36 && need > in.size())
        violated();
    if (c.problems.empty() && !c.checksumOk)
        violated();
}

void fuzzKmsg(std::string_view in)
{
    for (auto line : splitLines(in)) {
        KmsgRecord r;
        if (!parseKmsgRecord(line, r))
            continue;
        (void)isDaxRelevant(r);
        if (r.message.size() > line.size() || r.device.size() > line.size())
            violated();
    }
}

void fuzzUevent(std::string_view in)
{
    auto ev = parseUevent(in);
    if (!ev)
        return;
    (void)isPmemUevent(*ev);
    // Accepted: within the size bound, every variable ended by its NUL as
    // the kernel sends it (a cut datagram is refused), and the header is
    // exactly ACTION@DEVPATH.
    if (in.size() > kMaxUeventBytes || in.empty() || in.back() != '\0')
        violated();
    if (ev->subsystem.empty() || !ev->devpath.starts_with('/') ||
        in.substr(0, in.find('\0')) != ev->action + "@" + ev->devpath)
        violated();
}

} // namespace

void fuzzKernelText(KernelTextParser parser, std::string_view in)
{
    switch (parser) {
    case KernelTextParser::Mountinfo:
        fuzzMountinfo(in);
        break;
    case KernelTextParser::Nfit:
        fuzzNfit(in);
        break;
    case KernelTextParser::Kmsg:
        fuzzKmsg(in);
        break;
    case KernelTextParser::Vmstat:
        (void)parseVmstat(in);
        break;
    case KernelTextParser::Meminfo:
        (void)parseMeminfo(in);
        break;
    case KernelTextParser::Cedt:
        fuzzCedt(in);
        break;
    case KernelTextParser::Uevent:
        fuzzUevent(in);
        break;
    }
}

void fuzzKernelTextSelected(std::string_view in)
{
    if (in.empty())
        return;
    auto which =
        static_cast<KernelTextParser>(static_cast<unsigned char>(in[0]) % kKernelTextParsers);
    fuzzKernelText(which, in.substr(1));
}

} // namespace daxprobe

#ifndef DAXPROBE_NO_FUZZ_MAIN
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    std::string_view in(reinterpret_cast<const char *>(data), size);
#ifdef KERNEL_TEXT_PARSER
    daxprobe::fuzzKernelText(static_cast<daxprobe::KernelTextParser>(KERNEL_TEXT_PARSER), in);
#else
    daxprobe::fuzzKernelTextSelected(in);
#endif
    return 0;
}
#endif
