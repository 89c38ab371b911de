#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "probes/readers/fsmap_owners.h"

namespace daxprobe
{

// FS_IOC_GETFSMAP on the filesystem mounted at `mountPoint`: the records of
// its data device (st_dev) that overlap a range of `bad`. The query starts at
// byte 0 and ends at the device's end, read until past the last bad byte:
// XFS (6.1) leaves out a record that starts before the low key (the extent
// holding a bad range) and the free space after the last record below the
// high key. At most
// `maxScanned` records are read (an error past that). The error carries the
// ioctl's errno (EOPNOTSUPP, ENOTTY: the filesystem has no GETFSMAP).
Result<std::vector<FsmapRecord>> readFsmap(const std::string &mountPoint,
                                           const std::vector<DeviceBadBytes> &bad,
                                           std::size_t maxScanned);

} // namespace daxprobe
