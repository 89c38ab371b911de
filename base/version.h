#pragma once

#include <string>

namespace daxprobe
{

// Meson's project version (the release this tree is).
const char *projectVersion();
// `git describe` of the tree at build time, "" when built outside git (a
// release tarball, a Debian source package).
const char *vcsRevision();
// "0.1.0" or "0.1.0 (git 7a1d611-dirty)": what --version prints.
std::string versionString();

} // namespace daxprobe
