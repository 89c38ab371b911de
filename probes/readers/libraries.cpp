#include "probes/readers/libraries.h"

#include <utility>

namespace daxprobe
{

MissingLibrary missingLibndctl(std::string soname, std::string error)
{
    return {std::move(soname), std::move(error),
            "each DIMM's SMART health (ndctl list -DH: health state, life used, temperatures, "
            "shutdown state and count); the nd topology is read from sysfs and is complete"};
}

MissingLibrary missingLibpmem(std::string soname, std::string error)
{
    return {std::move(soname), std::move(error),
            "libpmem's own verdict (pmem_is_pmem: map_sync.is_pmem is null); the kernel's "
            "MAP_SYNC answer stands"};
}

} // namespace daxprobe
