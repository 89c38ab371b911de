// libFuzzer target: the line decoder and the message codec, the first code
// that touches bytes from the other side of the channel (either direction).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "line_decoder.h"
#include "message.h"
#include "schema.h"

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
        auto m = decode(f.text, limits);
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
