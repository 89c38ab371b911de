#pragma once

#include <string>
#include <string_view>

#include "base/beneath.h"
#include "base/result.h"
#include "base/unique_fd.h"

namespace daxprobe
{

// How root resolves a path it was given (docs/conventions.md, 14; issue 45,
// item 3). Every component, not only the last, is looked up without
// following another user's symlink: a symlink is followed only when its
// owner is root or the caller. That is the kernel's fs.protected_symlinks
// rule made stricter (it holds in every directory, not only sticky
// world-writable ones) and independent of the sysctl: root's own links
// (/var/run -> /run) keep working, while a link another user planted
// anywhere on the way is refused with EACCES, never followed.
//
// Where the kernel has openat2(), a path with no symlink at all is resolved
// in one call (RESOLVE_NO_SYMLINKS); otherwise, or when it has a symlink,
// one component at a time from held directory fds (O_PATH|O_NOFOLLOW), so a
// rename in between changes nothing already resolved. RESOLVE_BENEATH has
// no part here: these are paths a user gave, absolute or from the working
// directory, with no tree to stay below (base/beneath.h confines captures).

// Whose symlinks are followed: root's and the caller's (effective uid).
bool trustedLinkOwner(uid_t owner);

// The directory holding the path's last component, opened O_PATH once, and
// that component's name. With `followLast`, a last component that is a
// trusted symlink is followed too (as a shell's `>` follows), so the name
// returned is never a symlink when it was looked at; an untrusted one is
// refused. "", a trailing "/", "." and ".." as the last name are refused.
struct ResolvedName {
    UniqueFD dir;
    std::string name;
};
Result<ResolvedName> resolveTrusted(std::string_view path, bool followLast,
                                    ResolveMode mode = ResolveMode::Auto);

// The directory `path` names, every component resolved as above, opened
// O_RDONLY|O_DIRECTORY (for *at() calls and fdopendir).
Result<UniqueFD> openDirTrusted(std::string_view path, ResolveMode mode = ResolveMode::Auto);

} // namespace daxprobe
