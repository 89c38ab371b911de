#include "probes/readers/libpmem_loader.h"

#include <sys/types.h>

#include <atomic>
#include <libpmem.h>
#include <type_traits>

namespace daxprobe
{

// The pointer types above are spelled out so this header needs no libpmem.h;
// here they are held to the real declarations.
static_assert(std::is_same_v<decltype(&pmem_map_file), void *(*)(const char *, std::size_t, int,
                                                                 mode_t, std::size_t *, int *)>);
static_assert(std::is_same_v<decltype(&pmem_is_pmem), int (*)(const void *, std::size_t)>);
static_assert(std::is_same_v<decltype(&pmem_unmap), int (*)(void *, std::size_t)>);
static_assert(std::is_same_v<mode_t, unsigned>);
static_assert(LibPmem::kFileCreate == PMEM_FILE_CREATE &&
              LibPmem::kFileTmpfile == PMEM_FILE_TMPFILE);

namespace
{
std::atomic<bool> tried{false};
}

const Result<LibPmem> &LibPmem::shared()
{
    tried = true;
    static const Result<LibPmem> loaded = load();
    return loaded;
}

bool LibPmem::sharedTried()
{
    return tried;
}

Result<LibPmem> LibPmem::load(const std::string &soname)
{
    auto lib = UniqueLibrary::open(soname);
    if (!lib)
        return tl::unexpected(lib.error());
    LibPmem p;
    auto mapFile = lib->function<MapFile>("pmem_map_file");
    auto isPmem = lib->function<IsPmem>("pmem_is_pmem");
    auto unmap = lib->function<Unmap>("pmem_unmap");
    if (!mapFile)
        return tl::unexpected(mapFile.error());
    if (!isPmem)
        return tl::unexpected(isPmem.error());
    if (!unmap)
        return tl::unexpected(unmap.error());
    p.mapFile_ = *mapFile;
    p.isPmem_ = *isPmem;
    p.unmap_ = *unmap;
    p.lib_ = std::move(*lib);
    return p;
}

} // namespace daxprobe
