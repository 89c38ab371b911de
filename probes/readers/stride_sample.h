#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace daxprobe
{

// A systematic sample of a stream of unknown length: at most `capacity`
// items, spread over the whole stream rather than its first items. Item i
// (0-based, in stream order) is in the sample when i is a multiple of the
// stride; when the sample overflows, the stride doubles and the items off
// the new stride leave. No random seed: the same stream gives the same
// sample, every run.
template <typename T> class StrideSample
{
  public:
    explicit StrideSample(std::size_t capacity) : capacity_(std::max<std::size_t>(capacity, 1)) {}

    // Whether item `index` belongs in the sample: ask before examining it.
    bool wants(std::uint64_t index) const { return index % stride_ == 0; }

    // Item `index`, which wants() chose, examined.
    void add(std::uint64_t index, T value)
    {
        kept_.emplace_back(index, std::move(value));
        while (kept_.size() > capacity_) {
            stride_ *= 2;
            std::erase_if(kept_, [&](const auto &k) { return k.first % stride_ != 0; });
        }
    }

    std::uint64_t stride() const { return stride_; }
    // (index, value) pairs, in stream order.
    const std::vector<std::pair<std::uint64_t, T>> &kept() const { return kept_; }

  private:
    std::size_t capacity_;
    std::uint64_t stride_ = 1;
    std::vector<std::pair<std::uint64_t, T>> kept_;
};

} // namespace daxprobe
