#pragma once

#include <string>

namespace daxprobe
{

// A library daxprobe loads with dlopen() for one check, and could not:
// libndctl (each DIMM's SMART health) or libpmem (libpmem's own pmem_is_pmem
// verdict). The report says so once, and what it leaves unknown is null;
// the kernel's answers (sysfs, statx, MAP_SYNC) do not need either.
struct MissingLibrary {
    std::string soname;  // libndctl.so.6
    std::string error;   // the loader's own words (dlerror)
    std::string unknown; // what stays unknown without it, in the report's names
    bool operator==(const MissingLibrary &) const = default;
};

// The two, with what each leaves unknown.
MissingLibrary missingLibndctl(std::string soname, std::string error);
MissingLibrary missingLibpmem(std::string soname, std::string error);

} // namespace daxprobe
