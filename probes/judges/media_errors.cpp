#include "probes/judges/media_errors.h"

#include <fmt/format.h>

#include "probes/readers/badblocks.h"
#include "probes/readers/text_util.h"

namespace daxprobe
{

namespace
{

std::string deviceOf(const NdNamespace &ns)
{
    return "/dev/" + (ns.blockdev.empty() ? ns.chardev : ns.blockdev);
}

// ndctl clear-errors (ndctl 72+), run in an nfit_test guest (tests/vm
// nfit-ars): the kernel's lists empty, the sectors read again. It clears
// only the data area (not the info block) and leaves what the platform
// puts there.
std::string clearCommand(const NdNamespace &ns)
{
    return fmt::format("ndctl clear-errors {}   # the data in those ranges is lost already: it "
                       "becomes unpredictable; restore it from a backup afterwards",
                       shellQuote(ns.dev));
}

} // namespace

std::vector<ByteRange> mediaErrorBytes(const NdNamespace &ns)
{
    std::vector<ByteRange> out;
    for (const auto &r : ns.badRanges)
        out.push_back({r.sector * kSectorSize, r.count * kSectorSize});
    return out;
}

std::string mediaErrorText(const NdNamespace &ns)
{
    std::string out;
    for (const auto &b : mediaErrorBytes(ns))
        out += fmt::format("{}{}-{}", out.empty() ? "bytes " : ", ", b.offset,
                           b.offset + b.length - 1);
    return out + " of " + deviceOf(ns);
}

void judgeMediaErrors(const NdNamespace &ns, const MediaErrorContext &ctx, Verdict &v)
{
    if (ns.badblockCount == 0)
        return;
    if (v.severity == Severity::Ok)
        v.severity = Severity::Warning;
    if (!ns.badRanges.empty())
        v.evidence.push_back({"media_errors", mediaErrorText(ns)});
    // The pmem driver refuses listed sectors itself; device-DAX maps them
    // anyway, so only poisoned media makes a load fail (tests/vm devdax:
    // under QEMU, a machine check's range reads back as before), and kmem
    // onlines them as RAM all the same (devdax-system-ram after devdax).
    const char *consequence =
        ctx.systemRam ? "the page allocator hands those bytes out as RAM (kmem does not check "
                        "the list): a load there raises a machine check where the media is "
                        "poisoned"
        : ns.mode == "devdax"
            ? "a load there raises a machine check (SIGBUS) where the media is poisoned: "
              "device-DAX does not check the list"
            : "reads there fail with EIO";
    std::string warning = ns.badRanges.empty()
                              ? fmt::format("{} bad blocks: {} (ndctl list --media-errors -n {})",
                                            ns.badblockCount, consequence, ns.dev)
                              : fmt::format("{} bad sector(s) at {}: the data there is lost, {}",
                                            ns.badblockCount, mediaErrorText(ns), consequence);
    const bool clears = ctx.bus && clearsPoison(ctx.bus->provider, ctx.bus->commands);
    if (ctx.mounted) {
        warning += "; the mount's bad blocks name the files they hit";
    } else if (!clears) {
        warning += fmt::format("; {} cannot clear media errors (no clear_error in its commands)",
                               ctx.bus ? ctx.bus->dev : "its bus");
    } else if (v.remedy.empty()) {
        v.remedy = clearCommand(ns);
    } else {
        warning += "; to clear them: " + clearCommand(ns);
    }
    v.warnings.push_back(std::move(warning));
}

} // namespace daxprobe
