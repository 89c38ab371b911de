#include "collector/vm_metrics.h"

#include "base/text_escape.h"

namespace daxprobe::collector
{

// A label value is the name as `query` and the log show it (printable():
// bytes that are not UTF-8, controls and bidi overrides as \xNN, the
// backslash doubled), so two names that differ in one invalid byte stay two
// series, and the page stays UTF-8 (Prometheus rejects the whole scrape
// otherwise); then the exposition format's own escapes of \ and ".
std::string escapeLabel(std::string_view v)
{
    std::string shown = printable(v);
    std::string out;
    out.reserve(shown.size());
    for (char c : shown) {
        if (c == '\\' || c == '"')
            out.push_back('\\');
        out.push_back(c);
    }
    return out;
}

void VmMetrics::noteAgentDropped(const std::string &stream, std::uint64_t count)
{
    if (stream != droppedStream) {
        droppedStream = stream;
        droppedSeen = 0;
    }
    // A count that went down within a stream is a guest's say-so, not a
    // counter reset: nothing is added until it passes what was seen.
    if (count > droppedSeen) {
        agentDropped += count - droppedSeen;
        droppedSeen = count;
    }
}

} // namespace daxprobe::collector
