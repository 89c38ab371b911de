#include "base/version.h"

#include "base/version_vcs.h"

namespace daxprobe
{

const char *projectVersion()
{
    return DAXPROBE_PROJECT_VERSION;
}

const char *vcsRevision()
{
    return DAXPROBE_VCS_REVISION;
}

std::string versionString()
{
    std::string v = projectVersion();
    if (*vcsRevision())
        v += std::string(" (git ") + vcsRevision() + ")";
    return v;
}

} // namespace daxprobe
