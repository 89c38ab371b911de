#pragma once

#include <string_view>

#include "base/result.h"
#include "base/unique_fd.h"

namespace daxprobe
{

// How openBeneath() resolves: the kernel's openat2() (Linux 5.6+), or a
// component-by-component walk in user space. Auto uses openat2() and falls
// back to the walk where the kernel or a seccomp filter refuses it; tests
// pin one of the two so both stay covered on any kernel.
enum class ResolveMode { Auto, Openat2, Walk };

// Opens `rel` (relative to `dirfd`) without ever leaving the tree below
// `dirfd`: "..", absolute symlinks and /proc magic links that would lead out
// of it fail with EXDEV (openat2's RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
// systemd's chase()). A capture replayed from an untrusted tar must not read
// /etc/shadow through a planted link. O_CLOEXEC is always added.
Result<UniqueFD> openBeneath(int dirfd, std::string_view rel, int flags,
                             ResolveMode mode = ResolveMode::Auto);

} // namespace daxprobe
