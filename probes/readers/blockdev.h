#pragma once

#include <optional>
#include <string>
#include <utility>

#include "base/root.h"

namespace daxprobe
{

// "queue/dax" of a block device: 1 when the device can do DAX at all.
std::optional<bool> readQueueDax(const Root &root, const std::string &blockdev);

// The device number the kernel gives a block device ("259:0"), from sysfs.
std::optional<std::pair<unsigned, unsigned>> readBlockDevNumber(const Root &root,
                                                                const std::string &blockdev);

} // namespace daxprobe
