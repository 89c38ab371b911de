#include "collector/options.h"

#include <cerrno>
#include <cstdlib>
#include <sstream>

#include "base/root.h"

namespace daxprobe::collector
{

ChannelConfig parseSocketArg(const std::string &arg)
{
    ChannelConfig c;
    auto eq = arg.find('=');
    if (eq != std::string::npos && eq > 0 && arg[0] != '/') {
        c.name = arg.substr(0, eq);
        c.socketPath = arg.substr(eq + 1);
    } else {
        c.name = c.socketPath = arg;
    }
    return c;
}

Result<void> loadConfigFile(const std::string &path, CollectorOptions &o, std::string *logLevel)
{
    auto root = Root::open("/");
    if (!root)
        return tl::unexpected(root.error());
    auto text = root->readFile(path, 1 << 20);
    if (!text)
        return tl::unexpected(text.error());
    std::istringstream in(*text);
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
        ++n;
        if (auto hash = line.find('#'); hash != std::string::npos)
            line.erase(hash);
        std::istringstream f(line);
        std::string key, a, b;
        if (!(f >> key))
            continue;
        f >> a >> b;
        auto bad = [&] { return failf(EINVAL, "{}:{}: bad '{}' line", path, n, key); };
        if (key == "state-dir" && !a.empty())
            o.stateDir = a;
        else if (key == "socket" && !a.empty())
            o.sockets.push_back(b.empty() ? ChannelConfig{a, a, {}, false}
                                          : ChannelConfig{a, b, {}, false});
        else if (key == "pidfile" && !b.empty()) {
            bool found = false;
            for (auto &s : o.sockets)
                if (s.name == a) {
                    s.pidfile = b;
                    found = true;
                }
            if (!found)
                return failf(EINVAL, "{}:{}: pidfile for unknown socket '{}'", path, n, a);
        } else if (key == "watch-dir" && !a.empty())
            o.watchDirs.push_back(a);
        else if (key == "watch-name" && !a.empty())
            o.watchName = a;
        else if (key == "metrics-listen")
            o.metricsListen = a;
        else if ((key == "max-rows" || key == "max-bytes" || key == "max-guests" ||
                  key == "guest-rate" || key == "guest-byte-rate") &&
                 !a.empty()) {
            char *end = nullptr;
            unsigned long long v = std::strtoull(a.c_str(), &end, 10);
            if (*end || v == 0 || a[0] == '-')
                return bad();
            if (key == "max-rows")
                o.maxRowsPerVm = v;
            else if (key == "max-bytes")
                o.maxBytesPerVm = v;
            else if (key == "max-guests")
                o.maxChannels = v;
            else if (key == "guest-rate")
                o.messagesPerSecond = static_cast<double>(v);
            else
                o.bytesPerSecond = static_cast<double>(v);
        } else if (key == "log-level" && logLevel &&
                   (a == "trace" || a == "debug" || a == "info" || a == "warn" || a == "error" ||
                    a == "off"))
            *logLevel = a;
        else
            return bad();
    }
    return {};
}

} // namespace daxprobe::collector
