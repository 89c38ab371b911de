#pragma once

// The DOM reading of a report's summary: the reference twin that
// protocol::summarizeReport (text, no DOM) is tied to, by fuzz_decoder.cpp
// and tests/unit/protocol/test_report_summary.cpp.
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "protocol/report_summary.h"
#include "protocol/schema.h"

namespace daxprobe::protocol
{

inline ReportSummary summaryFromDom(const nlohmann::json &report)
{
    using nlohmann::json;
    auto member = [](const json &o, const char *key) -> const json * {
        if (!o.is_object())
            return nullptr;
        auto it = o.find(key);
        return it == o.end() ? nullptr : &*it;
    };
    auto str = [&](const json &o, const char *key) {
        const json *v = member(o, key);
        return v && v->is_string() ? v->get<std::string>() : std::string();
    };
    auto u64 = [&](const json &o, const char *key) -> std::optional<std::uint64_t> {
        const json *v = member(o, key);
        if (!v || !v->is_number_unsigned())
            return std::nullopt;
        return v->get<std::uint64_t>();
    };
    auto damagedFiles = [&](const json &o) -> std::optional<std::uint64_t> {
        const json *b = member(o, "badblocks");
        if (!b || !b->is_object())
            return std::nullopt;
        const json *f = member(*b, "files");
        return f && f->is_array() ? f->size() : 0;
    };
    auto code = [&](const json &o) {
        const json *v = member(o, "verdict");
        const json *c = v ? member(*v, "code") : nullptr;
        return c && c->is_string() ? sanitizeIdentifier(c->get<std::string>(), 64)
                                   : std::string("unknown");
    };
    ReportSummary s;
    s.code = code(report);
    if (const json *m = member(report, "mounts"); m && m->is_array())
        for (const auto &e : *m)
            s.mounts.push_back(
                {str(e, "mount_point"), code(e), str(e, "blockdev"), damagedFiles(e)});
    if (const json *n = member(report, "namespaces"); n && n->is_array())
        for (const auto &e : *n)
            s.namespaces.push_back({str(e, "dev"), str(e, "blockdev"), u64(e, "size"), code(e),
                                    u64(e, "badblock_count")});
    if (const json *d = member(report, "dimms"); d && d->is_array())
        for (const auto &e : *d) {
            const json *h = member(e, "health");
            s.dimms.push_back({str(e, "dev"), u64(e, "dirty_shutdown"), code(e),
                               h ? sanitizeIdentifier(str(*h, "health_state"), 32) : "",
                               h ? u64(*h, "shutdown_count") : std::nullopt});
        }
    if (const json *m = member(report, "meminfo"))
        s.pageCacheBytes = u64(*m, "Cached");
    return s;
}

} // namespace daxprobe::protocol
