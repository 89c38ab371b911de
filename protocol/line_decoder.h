#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace daxprobe::protocol
{

// Splits a byte stream into lines, incrementally, with a hard cap on what it
// buffers: a peer can never make it hold more than maxLine bytes. A 0xFF
// sentinel throws away any partial line (resynchronisation); an over-long
// line is reported once and skipped up to its newline.
class LineDecoder
{
  public:
    struct Frame {
        enum class Kind {
            Line,     // one complete line, newline and a trailing '\r' removed
            Oversize, // a line exceeded the cap; its rest is being skipped
            Resync,   // a 0xFF sentinel; `dropped` partial bytes were discarded
        };
        Kind kind;
        std::string text;
        std::size_t dropped = 0;
    };

    explicit LineDecoder(std::size_t maxLine) : maxLine_(maxLine) {}

    // Appends frames for every boundary found in data to out.
    void feed(std::string_view data, std::vector<Frame> &out);
    std::vector<Frame> feed(std::string_view data)
    {
        std::vector<Frame> out;
        feed(data, out);
        return out;
    }

    // Drops any partial line, e.g. after the peer reconnected.
    void reset()
    {
        buf_.clear();
        skipping_ = false;
    }

    std::size_t buffered() const { return buf_.size(); }
    bool skipping() const { return skipping_; }
    std::size_t maxLine() const { return maxLine_; }

  private:
    std::size_t maxLine_;
    std::string buf_;
    bool skipping_ = false;
};

} // namespace daxprobe::protocol
