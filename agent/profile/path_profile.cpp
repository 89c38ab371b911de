#include "agent/profile/path_profile.h"

namespace daxprobe
{

std::vector<PathProfile> profilePaths(const Root &root, const ProfileOptions &options)
{
    std::vector<PathProfile> out;
    for (const auto &path : options.paths) {
        PathProfile p;
        p.path = path;
        Result<FaultProfile> profiled = profileFile(root, path, options.write);
        if (profiled) {
            p.profile = std::move(*profiled);
            p.mapping = judgeMapping(p.profile);
        } else {
            p.error = profiled.error().describe();
        }
        out.push_back(std::move(p));
    }
    return out;
}

} // namespace daxprobe
