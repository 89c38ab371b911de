#pragma once

#include <unistd.h>
#include <utility>

namespace daxprobe
{

// Sole owner of a file descriptor (libcamera's UniqueFD).
class UniqueFD
{
  public:
    UniqueFD() = default;
    explicit UniqueFD(int fd) : fd_(fd) {}
    ~UniqueFD() { reset(); }

    UniqueFD(const UniqueFD &) = delete;
    UniqueFD &operator=(const UniqueFD &) = delete;
    UniqueFD(UniqueFD &&other) noexcept : fd_(other.release()) {}
    UniqueFD &operator=(UniqueFD &&other) noexcept
    {
        reset(other.release());
        return *this;
    }

    int get() const { return fd_; }
    bool isValid() const { return fd_ >= 0; }
    explicit operator bool() const { return isValid(); }

    [[nodiscard]] int release() { return std::exchange(fd_, -1); }
    void reset(int fd = -1)
    {
        int old = std::exchange(fd_, fd);
        if (old >= 0)
            ::close(old);
    }

  private:
    int fd_ = -1;
};

} // namespace daxprobe
