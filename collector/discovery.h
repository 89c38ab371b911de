#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/root.h"
#include "collector/options.h"

namespace daxprobe::collector
{

// One socket found for a VM in a watched directory.
struct SocketCandidate {
    std::string vm, path;       // path: the watched dir's path joined with the entry
    std::int64_t domainId = -1; // libvirt's domain-<id>-<name>; -1 when not that layout
    std::int64_t mtimeNs = 0;
    bool live = false; // something accepts connections on it
};

struct Discovery {
    std::map<std::string, ChannelConfig> channels; // by VM name: the socket chosen
    std::vector<std::string> subdirs;              // per-VM directories, to watch too
    std::map<std::string, std::string> why;        // VMs with several sockets: the choice
};

// "/a/b" -> "/a", "/a" -> "/", "a" -> "."
std::string parentDir(const std::string &path);

// Does something listen on this unix socket? (connect() succeeds)
using LiveProbe = std::function<bool(const std::string &path)>;
bool socketAcceptsConnections(const std::string &path);

// libvirt names channel dirs "domain-<id>-<name>"; the id changes per start,
// the name does not, so the name keeps one VM's history together.
std::string vmNameFromDir(const std::string &sub, std::int64_t *domainId = nullptr);

// Of several sockets for one VM (a stale domain-9-web left by a crash next
// to the live domain-10-web), the one to use: a live one first, then the
// newest, then the highest domain id. Never empty input.
const SocketCandidate &chooseSocket(const std::vector<SocketCandidate> &candidates);

// Reads each watched directory through a Root: `<dir>/domain-N-NAME/<watchName>`
// (libvirt), `<dir>/NAME.<watchName>` (older libvirt), or any socket when
// watchName is "*". The liveness probe runs only when a VM has several
// candidates; the caller logs a choice when it acts on it.
Discovery discoverSockets(const std::vector<std::string> &dirs, const std::string &watchName,
                          const LiveProbe &probe = socketAcceptsConnections);

} // namespace daxprobe::collector
