#pragma once

#include <cstddef>
#include <sys/mman.h>
#include <utility>

namespace daxprobe
{

// Sole owner of an mmap()ed range (UniqueFD's counterpart for mappings).
class UniqueMapping
{
  public:
    UniqueMapping() = default;
    UniqueMapping(void *addr, std::size_t length)
        : addr_(addr == MAP_FAILED ? nullptr : addr), length_(addr_ ? length : 0)
    {
    }
    ~UniqueMapping() { reset(); }

    UniqueMapping(const UniqueMapping &) = delete;
    UniqueMapping &operator=(const UniqueMapping &) = delete;
    UniqueMapping(UniqueMapping &&other) noexcept
        : addr_(std::exchange(other.addr_, nullptr)), length_(std::exchange(other.length_, 0))
    {
    }
    UniqueMapping &operator=(UniqueMapping &&other) noexcept
    {
        reset();
        addr_ = std::exchange(other.addr_, nullptr);
        length_ = std::exchange(other.length_, 0);
        return *this;
    }

    void *get() const { return addr_; }
    std::size_t length() const { return length_; }
    bool isValid() const { return addr_ != nullptr; }
    explicit operator bool() const { return isValid(); }

    // Gives up ownership (the caller unmaps, e.g. part by part).
    [[nodiscard]] std::pair<void *, std::size_t> release()
    {
        return {std::exchange(addr_, nullptr), std::exchange(length_, 0)};
    }

    void reset()
    {
        if (addr_)
            ::munmap(addr_, length_);
        addr_ = nullptr;
        length_ = 0;
    }

  private:
    void *addr_ = nullptr;
    std::size_t length_ = 0;
};

} // namespace daxprobe
