#include "collector/discovery.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

#include "base/unique_fd.h"

namespace daxprobe::collector
{

std::string parentDir(const std::string &path)
{
    auto slash = path.rfind('/');
    if (slash == std::string::npos)
        return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

bool socketAcceptsConnections(const std::string &path)
{
    sockaddr_un addr{};
    if (path.size() >= sizeof(addr.sun_path))
        return false;
    UniqueFD fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd)
        return false;
    addr.sun_family = AF_UNIX;
    path.copy(addr.sun_path, path.size());
    // Non-blocking: a listener with a full backlog gives EAGAIN, still live.
    return ::connect(fd.get(), reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) == 0 ||
           errno == EAGAIN;
}

std::string vmNameFromDir(const std::string &sub, std::int64_t *domainId)
{
    if (sub.rfind("domain-", 0) == 0) {
        auto dash = sub.find('-', 7);
        if (dash != std::string::npos && dash > 7 && dash - 7 <= 18 &&
            sub.find_first_not_of("0123456789", 7) == dash) {
            if (domainId)
                *domainId = std::stoll(sub.substr(7, dash - 7));
            return sub.substr(dash + 1);
        }
    }
    return sub;
}

const SocketCandidate &chooseSocket(const std::vector<SocketCandidate> &c)
{
    return *std::max_element(c.begin(), c.end(), [](const auto &a, const auto &b) {
        return std::tie(a.live, a.mtimeNs, a.domainId, a.path) <
               std::tie(b.live, b.mtimeNs, b.domainId, b.path);
    });
}

namespace
{

std::string join(const std::string &dir, const std::string &name)
{
    return dir.empty() || dir.back() == '/' ? dir + name : dir + "/" + name;
}

// stat through the Root's directory fd: nothing outside the watched dir.
bool statAt(const Root &root, const std::string &rel, struct stat &st)
{
    return ::fstatat(root.fd(), rel.c_str(), &st, 0) == 0;
}

} // namespace

Discovery discoverSockets(const std::vector<std::string> &dirs, const std::string &want,
                          const LiveProbe &probe)
{
    std::map<std::string, std::vector<SocketCandidate>> byVm;
    Discovery out;
    auto consider = [&](const Root &root, const std::string &rel, const std::string &vm,
                        std::int64_t domainId) {
        struct stat st {
        };
        if (!statAt(root, rel, st) || !S_ISSOCK(st.st_mode))
            return;
        SocketCandidate c;
        c.vm = vm;
        c.path = join(root.path(), rel);
        c.domainId = domainId;
        c.mtimeNs = std::int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
        byVm[vm].push_back(std::move(c));
    };
    for (const auto &dir : dirs) {
        auto root = Root::open(dir);
        if (!root)
            continue;
        auto entries = root->listDir(".");
        if (!entries)
            continue;
        for (const auto &entry : *entries) {
            if (entry.empty() || entry[0] == '.')
                continue;
            struct stat st {
            };
            if (!statAt(*root, entry, st))
                continue;
            if (S_ISDIR(st.st_mode)) {
                out.subdirs.push_back(join(dir, entry));
                std::int64_t id = -1;
                std::string vm = vmNameFromDir(entry, &id);
                auto files = root->listDir(entry);
                if (!files)
                    continue;
                for (const auto &f : *files)
                    if (want == "*" || f == want)
                        consider(*root, entry + "/" + f, vm, id);
            } else if (want == "*") {
                consider(*root, entry, entry, -1);
            } else if (entry.size() > want.size() + 1 &&
                       entry.compare(entry.size() - want.size(), want.size(), want) == 0 &&
                       entry[entry.size() - want.size() - 1] == '.') {
                // older libvirt: <dir>/NAME.<channel name>
                consider(*root, entry, entry.substr(0, entry.size() - want.size() - 1), -1);
            }
        }
    }
    for (auto &[vm, candidates] : byVm) {
        if (candidates.size() > 1)
            for (auto &c : candidates)
                c.live = probe(c.path);
        const SocketCandidate &best = chooseSocket(candidates);
        if (candidates.size() > 1)
            out.why[vm] =
                fmt::format("{} sockets found, {} chosen (domain id {})", candidates.size(),
                            best.live ? "the live one" : "none live: the newest", best.domainId);
        out.channels[vm] = ChannelConfig{vm, best.path, {}, true};
    }
    return out;
}

} // namespace daxprobe::collector
