#include "protocol/line_decoder.h"

#include <cstring>

#include "protocol/protocol_limits.h"

namespace daxprobe::protocol
{

void LineDecoder::feed(std::string_view data, std::vector<Frame> &out)
{
    // The next sentinel, found once per feed (it is rare): then each line's
    // end is one memchr, and whole runs are copied, not bytes.
    const char *sentinel =
        static_cast<const char *>(std::memchr(data.data(), kSentinel, data.size()));
    while (!data.empty()) {
        if (sentinel && sentinel < data.data())
            sentinel = static_cast<const char *>(std::memchr(data.data(), kSentinel, data.size()));
        std::size_t limit =
            sentinel ? static_cast<std::size_t>(sentinel - data.data()) : data.size();
        const void *nl = std::memchr(data.data(), '\n', limit);
        std::size_t i =
            nl ? static_cast<std::size_t>(static_cast<const char *>(nl) - data.data()) : limit;

        std::string_view run = data.substr(0, i);
        if (!skipping_) {
            if (buf_.size() + run.size() > maxLine_) {
                out.push_back({Frame::Kind::Oversize, {}, buf_.size() + run.size()});
                buf_.clear();
                skipping_ = true;
            } else {
                buf_.append(run);
            }
        }
        if (i == data.size())
            return;

        if (data[i] == kSentinel) {
            out.push_back({Frame::Kind::Resync, {}, buf_.size()});
            buf_.clear();
            skipping_ = false;
        } else if (skipping_) {
            skipping_ = false; // the over-long line ends here
        } else {
            if (!buf_.empty() && buf_.back() == '\r')
                buf_.pop_back();
            // Blank lines are keep-alives from hand-typed sessions, not messages.
            if (buf_.find_first_not_of(" \t") != std::string::npos)
                out.push_back({Frame::Kind::Line, std::move(buf_), 0});
            buf_.clear();
        }
        data.remove_prefix(i + 1);
    }
}

} // namespace daxprobe::protocol
