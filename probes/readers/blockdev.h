#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "base/root.h"

namespace daxprobe
{

// A block device a mount or a namespace names, as the kernel numbers it.
// A partition (pmem0p1) is tied to its disk (pmem0): the namespace, the
// region and queue/dax belong to the disk.
struct BlockDevFacts {
    std::string name; // the kernel's name for major:minor (pmem0p1), its node /dev/NAME
    unsigned major = 0;
    unsigned minor = 0;
    std::optional<bool> queueDax; // the disk's
    std::string partitionOf;      // a partition's disk (pmem0); empty for a disk
    // Bytes from the disk's first byte to the partition's; 0 for a disk,
    // nullopt when the kernel did not say.
    std::optional<std::uint64_t> partitionStart = 0;
    bool partition() const { return !partitionOf.empty(); }
    // The whole disk: the partition's, else this one.
    const std::string &disk() const { return partitionOf.empty() ? name : partitionOf; }
};

// "queue/dax" of a block device: 1 when the device can do DAX at all.
std::optional<bool> readQueueDax(const Root &root, const std::string &blockdev);

// The device number the kernel gives a block device ("259:0"), from sysfs.
std::optional<std::pair<unsigned, unsigned>> readBlockDevNumber(const Root &root,
                                                                const std::string &blockdev);

// The block device with this number (a mount's major:minor), whatever the
// mount's source says (/dev/root, UUID=..., a bind mount): its name from
// /sys/dev/block/MAJ:MIN/uevent, a partition's disk and start from
// /sys/block/DISK/PART. nullopt when the kernel has no block device of that
// number (or the Root is a capture made before this was read).
std::optional<BlockDevFacts> readBlockDevByNumber(const Root &root, unsigned major, unsigned minor);

// A whole disk by name (a namespace's pmem0).
std::optional<BlockDevFacts> readDisk(const Root &root, const std::string &name);

} // namespace daxprobe
