#pragma once

#include <functional>
#include <linux/fiemap.h>

namespace daxprobe
{

// Every extent FS_IOC_FIEMAP gives for the open file `fd`, in order, until
// the last one; `visit` returns false to stop early. Quietly ends when the
// filesystem has no FIEMAP or answers without progress.
void forEachExtent(int fd, const std::function<bool(const fiemap_extent &)> &visit);

} // namespace daxprobe
