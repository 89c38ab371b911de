#include "probes/judges/dax_refusals.h"

#include <fmt/format.h>

#include "probes/judges/remedies.h"
#include "probes/readers/text_util.h"

namespace daxprobe
{

namespace
{

// DAX maps the filesystem's blocks as pages: a block must be a page (x86-64: 4 KiB).
std::string remakeExt4PageBlocks(const MountTarget &t)
{
    return remakeFilesystem(t, "-b 4096");
}

std::string remakeXfsPageBlocks(const MountTarget &t)
{
    return remakeFilesystem(t, "-b size=4096");
}

std::string remakeWithoutInlineData(const MountTarget &t)
{
    return remakeFilesystem(t, "-O ^inline_data");
}

std::string remakeWithoutReflink(const MountTarget &t)
{
    return remakeFilesystem(t, "-m reflink=0");
}

// data=journal may come from the mount options or the superblock's defaults.
std::string mountWithoutJournalData(const MountTarget &t)
{
    if (t.bootRoot)
        return fmt::format("tune2fs -o ^journal_data {}, then {}", shellQuote(t.device),
                           bootWithDaxAnd(t, "data=ordered"));
    return fmt::format("umount {0}; tune2fs -o ^journal_data {1}; "
                       "mount -o dax=always,data=ordered {1} {0}",
                       shellQuote(t.mountPoint), shellQuote(t.device));
}

using Outcome = DaxRefusal::Outcome;

const DaxRefusal kRefusals[] = {
    // ext4 logs this at every mount on a DAX device, with or without -o dax;
    // with it the mount then fails with "DAX unsupported by block device."
    {"unsupported blocksize for DAX", Outcome::Note,
     "its block size is smaller than the page size (mkfs.ext4 picks 1 KiB blocks on small "
     "devices), and the block size is fixed when the filesystem is made",
     remakeExt4PageBlocks},
    {"DAX not supported for blocksize", Outcome::DaxOff,
     "its block size is not the page size, and the block size is fixed when the filesystem is "
     "made",
     remakeXfsPageBlocks},
    {"Cannot use DAX on a filesystem that may contain inline data", Outcome::Fails,
     "it has the inline_data feature, which tune2fs cannot remove", remakeWithoutInlineData},
    {"can't mount with both data=journal and dax", Outcome::Fails,
     "data=journal (a mount option or the superblock's default) copies every write through "
     "the journal, which DAX cannot do",
     mountWithoutJournalData},
    {"can't change dax mount option while remounting", Outcome::Fails,
     "a remount cannot change the dax option: it takes a fresh mount", remountDax},
    {"DAX and reflink cannot work with multi-partitions", Outcome::Fails,
     "a reflink filesystem can use DAX only on a whole pmem device, not a partition of one",
     remakeWithoutReflink},
    {"DAX and reflink cannot be used together", Outcome::Fails,
     "this kernel's XFS cannot use DAX on a reflink filesystem", remakeWithoutReflink},
};

} // namespace

const DaxRefusal *findDaxRefusal(std::string_view message)
{
    for (const auto &r : kRefusals)
        if (message.find(r.message) != std::string_view::npos)
            return &r;
    return nullptr;
}

} // namespace daxprobe
