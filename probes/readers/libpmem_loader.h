#pragma once

#include <cstddef>
#include <string>

#include "base/result.h"
#include "base/unique_library.h"

namespace daxprobe
{

// libpmem, loaded on first use: only the MAP_SYNC check on a DAX mount needs
// it, and linked in it cost every check its dependencies (libndctl, libdaxctl,
// libudev, libkmod, libcrypto...: ~2/3 of the relocations and page faults of
// a check that finds no DAX mount). The library closes with this object.
class LibPmem
{
  public:
    // pmem_map_file() flags (libpmem.h's PMEM_FILE_*).
    static constexpr int kFileCreate = 1 << 0;
    static constexpr int kFileTmpfile = 1 << 3;

    // kSoname: the soname Debian's libpmem1 ships.
    static constexpr const char *kSoname = "libpmem.so.1";
    static Result<LibPmem> load(const std::string &soname = kSoname);
    // The process's one libpmem, loaded on the first call and kept: the agent
    // checks again and again, and loading libpmem's chain anew was half of
    // its check's time in a TCG guest (147 -> 74 ms, bench/agent_bench.py);
    // libcrypto, which that chain loads, stayed mapped after dlclose anyway.
    // A libpmem missing at the first call stays missing until the process
    // restarts.
    static const Result<LibPmem> &shared();
    // Whether shared() was called (and so tried to load it).
    static bool sharedTried();

    void *mapFile(const char *path, std::size_t len, int flags, unsigned mode,
                  std::size_t *mappedLen, int *isPmem) const
    {
        return mapFile_(path, len, flags, mode, mappedLen, isPmem);
    }
    int isPmem(const void *addr, std::size_t len) const { return isPmem_(addr, len); }
    int unmap(void *addr, std::size_t len) const { return unmap_(addr, len); }

  private:
    using MapFile = void *(*)(const char *, std::size_t, int, unsigned, std::size_t *, int *);
    using IsPmem = int (*)(const void *, std::size_t);
    using Unmap = int (*)(void *, std::size_t);

    UniqueLibrary lib_;
    MapFile mapFile_ = nullptr;
    IsPmem isPmem_ = nullptr;
    Unmap unmap_ = nullptr;
};

} // namespace daxprobe
