// libFuzzer target: the line decoder and the message codec, the first code
// that touches bytes from the other side of the channel (either direction).
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "protocol/json_text.h"
#include "protocol/line_decoder.h"
#include "protocol/message.h"
#include "protocol/schema.h"

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
        auto valid = validateJson(f.text, limits.maxDepth);
        if (valid.has_value() != (accepted && jsonDepth(f.text) <= limits.maxDepth))
            __builtin_trap();
        auto m = decode(f.text, limits);
        // The report path without a DOM agrees with the DOM's: the same
        // lines taken, the same fields, the same report and metrics.
        auto text = decodeReportLine(f.text, limits);
        if (!text && m && text.error().code != EPROTO)
            __builtin_trap(); // a message to the DOM, not even JSON to the text path
        auto dom = m ? parseReportEvent(*m)
                     : daxprobe::Result<ReportEnvelope>(daxprobe::fail("no message"));
        if (text && *text) {
            const ReportRecord &r = **text;
            if (!dom || dom->stream != r.stream || dom->seq != r.seq || dom->reason != r.reason ||
                dom->droppedReports != r.droppedReports ||
                dom->report != nlohmann::json::parse(r.reportText) ||
                dom->metrics != (r.metricsText.empty() ? nlohmann::json()
                                                       : nlohmann::json::parse(r.metricsText)) ||
                r.codes.verdict != reportCodes(dom->report.dump()).verdict)
                __builtin_trap();
        } else if (dom) {
            __builtin_trap(); // the DOM took a report the text path refused or passed over
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
