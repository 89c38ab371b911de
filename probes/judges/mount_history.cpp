#include "probes/judges/mount_history.h"

#include "probes/judges/dax_refusals.h"
#include "probes/readers/mount_lines.h"
#include "probes/readers/text_util.h"

namespace daxprobe
{

namespace
{

bool has(std::string_view s, std::string_view needle)
{
    return s.find(needle) != std::string_view::npos;
}

enum class AttemptResult { Pending, Mounted, Failed };

struct Attempt {
    std::vector<std::string> lines;
    AttemptResult outcome = AttemptResult::Pending;
    bool unmounted = false;
};

} // namespace

MountEvent classifyMountLine(std::string_view m)
{
    // XFS says both halves on one line: refused by the device, mounted anyway.
    if (has(m, "Turning off DAX"))
        return MountEvent::DaxTurnedOff;
    if (const DaxRefusal *r = findDaxRefusal(m); r && r->outcome != DaxRefusal::Outcome::Note)
        return r->outcome == DaxRefusal::Outcome::DaxOff ? MountEvent::DaxTurnedOff
                                                         : MountEvent::DaxRefused;
    if (has(m, "DAX unsupported by block device"))
        return MountEvent::DaxRefused;
    switch (mountLifecycleOf(m)) {
    case MountLifecycle::Mounted:
        return MountEvent::Mounted;
    case MountLifecycle::Unmounted:
        return MountEvent::Unmounted;
    case MountLifecycle::Failed:
        return MountEvent::Failed;
    case MountLifecycle::None:
        break;
    }
    return MountEvent::None;
}

DeviceKmsg attributeKmsg(const std::vector<KmsgRecord> &records, const std::string &device)
{
    DeviceKmsg out;
    if (device.empty())
        return out;
    std::vector<Attempt> attempts;
    Attempt open;
    for (const auto &r : records) {
        if (r.device != device)
            continue;
        MountEvent e = classifyMountLine(r.message);
        if (e == MountEvent::Unmounted && open.lines.empty() && !attempts.empty() &&
            attempts.back().outcome == AttemptResult::Mounted) {
            attempts.back().unmounted = true;
            attempts.back().lines.push_back(r.message);
            continue;
        }
        open.lines.push_back(r.message);
        if (e == MountEvent::Mounted || e == MountEvent::DaxRefused || e == MountEvent::Failed) {
            open.outcome =
                e == MountEvent::Mounted ? AttemptResult::Mounted : AttemptResult::Failed;
            attempts.push_back(std::move(open));
            open = {};
        }
    }
    if (!open.lines.empty())
        attempts.push_back(std::move(open));

    // The mount in place now: the last attempt that mounted and was not
    // unmounted since. Without one (the log wrapped, or a filesystem that logs
    // no mounts), lines of unfinished attempts may be the current mount's;
    // a refusal never is (that mount failed).
    int current = -1;
    for (int i = static_cast<int>(attempts.size()) - 1; i >= 0; --i)
        if (attempts[i].outcome == AttemptResult::Mounted && !attempts[i].unmounted) {
            current = i;
            break;
        }
    out.attributed = current >= 0;
    for (int i = 0; i < static_cast<int>(attempts.size()); ++i) {
        const Attempt &a = attempts[i];
        bool isCurrent = i == current || (current < 0 && a.outcome == AttemptResult::Pending);
        if (isCurrent) {
            out.current.insert(out.current.end(), a.lines.begin(), a.lines.end());
            continue;
        }
        const char *what = a.outcome == AttemptResult::Failed    ? "failed"
                           : a.unmounted                         ? "unmounted"
                           : a.outcome == AttemptResult::Mounted ? "superseded"
                                                                 : "unfinished";
        for (const auto &l : a.lines) {
            MountEvent e = classifyMountLine(l);
            if (e == MountEvent::DaxRefused || e == MountEvent::DaxTurnedOff ||
                containsNoCase(l, "dax"))
                out.history.push_back({l, what});
        }
    }
    return out;
}

} // namespace daxprobe
