#pragma once

#include <string>
#include <string_view>
#include <sys/types.h>

#include "base/result.h"
#include "base/unique_fd.h"

namespace daxprobe
{

// How a command run as root writes, creates and removes files on paths that
// other users may control (docs/conventions.md, 14). Names are resolved once,
// into a directory fd held from then on; everything after is relative to it
// with O_NOFOLLOW, so renaming a parent or planting a symlink later changes
// nothing we write or remove.

// Which inode a name was when we made it.
struct FileId {
    dev_t dev = 0;
    ino_t ino = 0;
    bool operator==(const FileId &) const = default;
};

// The directory that holds a path's last component, opened once, and that
// name. Symlinks before the last component are followed only when root or
// the caller owns them (base/safe_path.h); another user's is refused.
// Refuses a path whose last component is empty, "." or "..".
struct ParentDir {
    UniqueFD dir;
    std::string name;
};
Result<ParentDir> openParent(std::string_view path);

// A file we created: O_CREAT|O_EXCL|O_NOFOLLOW in `dirfd`, never an existing
// name (EEXIST), never through a symlink.
struct CreatedFile {
    UniqueFD fd;
    FileId id;
};
Result<CreatedFile> createExclusive(int dirfd, const std::string &name, int flags, mode_t mode);

// A directory we created (mkdirat), opened O_NOFOLLOW and checked to be an
// empty directory owned by us: what a rename in between could swap in fails.
Result<UniqueFD> makeDirExclusive(int dirfd, const std::string &name, mode_t mode);

// Removes `name` from `dirfd` only if it is still the inode `id` (checked
// with fstatat AT_SYMLINK_NOFOLLOW, then unlinkat on the same dirfd).
// ENOENT: already gone. ESTALE: the name is now something else, left alone.
Result<void> removeCreated(int dirfd, const std::string &name, const FileId &id);

// Opens `path` for writing as a shell's `>` would (created 0666 & ~umask, or
// truncated), except that, whatever the fs.protected_* sysctls say:
// - no symlink of another user is followed, on any component, the last
//   included (base/safe_path.h); root's and the caller's are;
// - an existing file with more than one hard link is refused (EMLINK);
// - inside a sticky world-writable directory such as /tmp, as
//   protected_regular does, a file owned by neither the caller nor the
//   directory's owner is refused, and a FIFO never blocks.
Result<UniqueFD> openForRedirect(std::string_view path);

// write(2) until done (EINTR and short writes retried).
Result<void> writeAll(int fd, std::string_view data, std::string_view what);

} // namespace daxprobe
