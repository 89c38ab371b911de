#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>

namespace daxprobe
{

// Reports the host has not acknowledged yet, oldest first, each kept as its
// encoded line so a resend is byte-identical. Bounded: past the bound the
// oldest is dropped and counted (a host that never acks must not grow us).
class ReportQueue
{
  public:
    struct Entry {
        std::uint64_t seq;
        std::string line;
    };

    explicit ReportQueue(std::size_t maxEntries) : max_(maxEntries ? maxEntries : 1) {}

    void push(std::uint64_t seq, std::string line)
    {
        while (entries_.size() >= max_) {
            entries_.pop_front();
            ++dropped_;
        }
        entries_.push_back({seq, std::move(line)});
    }

    // Cumulative: forgets every entry with seq <= upTo. Returns how many.
    std::size_t ack(std::uint64_t upTo)
    {
        std::size_t n = 0;
        while (!entries_.empty() && entries_.front().seq <= upTo) {
            entries_.pop_front();
            ++n;
        }
        return n;
    }

    const std::deque<Entry> &entries() const { return entries_; }
    std::size_t size() const { return entries_.size(); }
    std::uint64_t dropped() const { return dropped_; }
    std::size_t capacity() const { return max_; }

  private:
    std::size_t max_;
    std::deque<Entry> entries_;
    std::uint64_t dropped_ = 0;
};

} // namespace daxprobe
