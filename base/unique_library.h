#pragma once

#include <dlfcn.h>

#include <string>
#include <utility>

#include "base/result.h"

namespace daxprobe
{

// Sole owner of a dlopen() handle (as UniqueFD owns an fd): a library the
// program needs only on some paths is loaded there, and closed with its owner.
class UniqueLibrary
{
  public:
    UniqueLibrary() = default;
    ~UniqueLibrary() { reset(); }

    UniqueLibrary(const UniqueLibrary &) = delete;
    UniqueLibrary &operator=(const UniqueLibrary &) = delete;
    UniqueLibrary(UniqueLibrary &&other) noexcept : handle_(std::exchange(other.handle_, nullptr))
    {
    }
    UniqueLibrary &operator=(UniqueLibrary &&other) noexcept
    {
        reset(std::exchange(other.handle_, nullptr));
        return *this;
    }

    // RTLD_LOCAL: its symbols stay out of the global namespace; RTLD_NOW: a
    // missing symbol fails here, not at the first call.
    static Result<UniqueLibrary> open(const std::string &soname)
    {
        UniqueLibrary lib;
        lib.handle_ = ::dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!lib.handle_) {
            const char *why = ::dlerror();
            return fail("dlopen " + soname + ": " + (why ? why : "unknown error"));
        }
        return lib;
    }

    // The address of `name` as a function of type F, or an error naming it.
    template <typename F> Result<F> function(const char *name) const
    {
        ::dlerror();
        void *sym = handle_ ? ::dlsym(handle_, name) : nullptr;
        if (!sym)
            return fail(std::string("dlsym ") + name + ": missing");
        return reinterpret_cast<F>(sym);
    }

    bool isValid() const { return handle_ != nullptr; }
    void reset(void *handle = nullptr)
    {
        void *old = std::exchange(handle_, handle);
        if (old)
            ::dlclose(old);
    }

  private:
    void *handle_ = nullptr;
};

} // namespace daxprobe
