// libFuzzer target: the line decoder and the message codec, the first code
// that touches bytes from the other side of the channel (either direction).
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <variant>

#include "protocol/json_text.h"
#include "protocol/line_decoder.h"
#include "protocol/message.h"
#include "protocol/schema.h"
#include "tests/fuzz/report_summary_twin.h"

using namespace daxprobe::protocol;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    std::string_view in(reinterpret_cast<const char *>(data), size);
    // Small caps so the fuzzer reaches the oversize and depth paths quickly.
    Limits limits{4096, 8};
    LineDecoder decoder(limits.maxMessageBytes);
    // Feed in two uneven pieces: split reads must not change the outcome.
    std::size_t cut = size ? data[0] % (size + 1) : 0;
    auto frames = decoder.feed(in.substr(0, cut));
    decoder.feed(in.substr(cut), frames);
    if (decoder.buffered() > limits.maxMessageBytes)
        __builtin_trap();
    for (const auto &f : frames) {
        if (f.kind != LineDecoder::Frame::Kind::Line)
            continue;
        // The text validator accepts exactly what nlohmann's parser does.
        bool accepted = nlohmann::json::accept(f.text);
        JsonSpans spans;
        auto valid = validateJson(f.text, limits.maxDepth, &spans);
        if (valid.has_value() != (accepted && jsonDepth(f.text) <= limits.maxDepth))
            __builtin_trap();
        // The summary of untrusted text: read without a DOM (with the spans
        // or without), it says what the DOM says; text that is not JSON
        // must not crash it.
        (void)summarizeReport(f.text);
        if (valid) {
            auto dom = summaryFromDom(nlohmann::json::parse(*valid));
            if (summarizeReport(*valid, &spans) != dom || summarizeReport(*valid) != dom)
                __builtin_trap();
        }
        auto m = decode(f.text, limits);
        // One decode per line: a report from its text, with the DOM's
        // outcome (the same lines taken, the same fields, the same report
        // and metrics); any other line the message decode() gives.
        auto text = decodeLine(f.text, limits);
        const ReportRecord *r = text ? std::get_if<ReportRecord>(&*text) : nullptr;
        auto dom = m ? parseReportEvent(*m)
                     : daxprobe::Result<ReportEnvelope>(daxprobe::fail("no message"));
        if (r) {
            if (!dom || dom->stream != r->stream || dom->seq != r->seq ||
                dom->reason != r->reason || dom->droppedReports != r->droppedReports ||
                dom->report != nlohmann::json::parse(r->reportText) ||
                dom->metrics != (r->metricsText.empty() ? nlohmann::json()
                                                        : nlohmann::json::parse(r->metricsText)) ||
                r->summary != summaryFromDom(dom->report))
                __builtin_trap();
        } else if (dom) {
            __builtin_trap(); // the DOM took a report the text path refused
        } else if (text) {
            const Message &t = std::get<Message>(*text);
            if (!m || (t.kind == Message::Kind::Event && t.name == kEventReport) ||
                t.kind != m->kind || t.name != m->name || t.payload != m->payload ||
                t.id != m->id || t.errorClass != m->errorClass || t.errorDesc != m->errorDesc ||
                t.timestamp != m->timestamp)
                __builtin_trap();
        } else if (m && (m->kind != Message::Kind::Event || m->name != kEventReport ||
                         text.error().code != EPROTO)) {
            __builtin_trap(); // refused here, only a report event the DOM refuses too
        }
        if (!m)
            continue;
        (void)parseReportEvent(*m);
        (void)parseGreeting(*m);
        (void)parseAckArguments(m->payload);
        // What we encode must decode again, as one line.
        std::string again = encode(nlohmann::json{{"event", "x"}, {"data", m->payload}});
        if (again.find('\n') != again.size() - 1)
            __builtin_trap();
    }
    return 0;
}
