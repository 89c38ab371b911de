#include "protocol/report_summary.h"

#include "protocol/identifier.h"
#include "protocol/json_text.h"

namespace daxprobe::protocol
{

namespace
{

// A verdict object's "code" (last one wins).
std::string codeOf(std::string_view verdict, const JsonSpans *spans)
{
    std::string code = "unknown", key;
    std::string_view v;
    for (JsonObjectReader r(verdict, spans); r.next(key, v);)
        if (key == "code") {
            auto s = jsonString(v);
            code = s ? sanitizeIdentifier(*s, 64) : "unknown";
        }
    return code;
}

std::string stringOf(std::string_view v)
{
    return jsonString(v).value_or("");
}

// The number of elements of a mount's badblocks.files, if it has a badblocks object.
std::optional<std::uint64_t> damagedFilesOf(std::string_view badblocks, const JsonSpans *spans)
{
    if (!jsonIsObject(badblocks))
        return std::nullopt;
    std::uint64_t n = 0;
    std::string key;
    std::string_view v, files, e;
    for (JsonObjectReader r(badblocks, spans); r.next(key, v);)
        if (key == "files")
            files = v;
    for (JsonArrayReader a(files, spans); a.next(e);)
        ++n;
    return n;
}

ReportSummary::Mount mountOf(std::string_view mount, const JsonSpans *spans)
{
    ReportSummary::Mount m;
    std::string key;
    std::string_view v, verdict;
    for (JsonObjectReader r(mount, spans); r.next(key, v);) {
        if (key == "mount_point")
            m.key = stringOf(v);
        else if (key == "blockdev")
            m.blockdev = stringOf(v);
        else if (key == "verdict")
            verdict = v;
        else if (key == "badblocks")
            m.damagedFiles = damagedFilesOf(v, spans);
    }
    m.code = codeOf(verdict, spans);
    return m;
}

ReportSummary::Namespace namespaceOf(std::string_view ns, const JsonSpans *spans)
{
    ReportSummary::Namespace n;
    std::string key;
    std::string_view v, verdict;
    for (JsonObjectReader r(ns, spans); r.next(key, v);) {
        if (key == "dev")
            n.dev = stringOf(v);
        else if (key == "blockdev")
            n.blockdev = stringOf(v);
        else if (key == "size")
            n.size = jsonUnsigned(v);
        else if (key == "badblock_count")
            n.badblocks = jsonUnsigned(v);
        else if (key == "verdict")
            verdict = v;
    }
    n.code = codeOf(verdict, spans);
    return n;
}

// A DIMM's "health": its state and live unsafe-shutdown count.
void healthOf(std::string_view health, const JsonSpans *spans, ReportSummary::Dimm &d)
{
    std::string key;
    std::string_view v;
    d.healthState.clear(); // a repeated "health": the last one counts, as in the DOM
    d.shutdownCount.reset();
    for (JsonObjectReader r(health, spans); r.next(key, v);) {
        if (key == "health_state")
            d.healthState = sanitizeIdentifier(stringOf(v), 32);
        else if (key == "shutdown_count")
            d.shutdownCount = jsonUnsigned(v);
    }
}

ReportSummary::Dimm dimmOf(std::string_view dimm, const JsonSpans *spans)
{
    ReportSummary::Dimm d;
    std::string key;
    std::string_view v, verdict;
    for (JsonObjectReader r(dimm, spans); r.next(key, v);) {
        if (key == "dev")
            d.dev = stringOf(v);
        else if (key == "dirty_shutdown")
            d.dirtyShutdown = jsonUnsigned(v);
        else if (key == "health")
            healthOf(v, spans, d);
        else if (key == "verdict")
            verdict = v;
    }
    d.code = codeOf(verdict, spans);
    return d;
}

} // namespace

ReportSummary summarizeReport(std::string_view reportText, const JsonSpans *spans)
{
    ReportSummary s;
    std::string key;
    std::string_view v, verdict, mounts, namespaces, dimms, meminfo;
    for (JsonObjectReader r(reportText, spans); r.next(key, v);) {
        if (key == "verdict")
            verdict = v;
        else if (key == "mounts")
            mounts = v;
        else if (key == "namespaces")
            namespaces = v;
        else if (key == "dimms")
            dimms = v;
        else if (key == "meminfo")
            meminfo = v;
    }
    s.code = codeOf(verdict, spans);
    std::string_view e;
    for (JsonArrayReader a(mounts, spans); a.next(e);)
        s.mounts.push_back(mountOf(e, spans));
    for (JsonArrayReader a(namespaces, spans); a.next(e);)
        s.namespaces.push_back(namespaceOf(e, spans));
    for (JsonArrayReader a(dimms, spans); a.next(e);)
        s.dimms.push_back(dimmOf(e, spans));
    for (JsonObjectReader r(meminfo, spans); r.next(key, v);)
        if (key == "Cached")
            s.pageCacheBytes = jsonUnsigned(v);
    return s;
}

} // namespace daxprobe::protocol
