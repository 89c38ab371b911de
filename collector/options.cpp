#include "collector/options.h"

#include <cerrno>
#include <sstream>

#include "base/root.h"
#include "collector/option_ranges.h"

namespace daxprobe::collector
{

Result<ChannelConfig> parseSocketArg(const std::string &arg)
{
    ChannelConfig c;
    auto eq = arg.find('=');
    if (arg.empty())
        return failf(EINVAL, "--socket '': give [NAME=]PATH");
    if (arg[0] == '/' || eq == std::string::npos) {
        c.name = c.socketPath = arg; // an absolute path may hold '='
        return c;
    }
    c.name = arg.substr(0, eq);
    c.socketPath = arg.substr(eq + 1);
    // "a=b=PATH" is VM "a" at "b=PATH" or VM "a=b" at "PATH": refuse to
    // guess (a wrong guess stores a VM's reports under another name).
    if (c.name.empty())
        return failf(EINVAL, "--socket {}: the VM name before '=' is empty", arg);
    if (c.socketPath.empty())
        return failf(EINVAL, "--socket {}: the path after '=' is empty", arg);
    if (c.socketPath.find('=') != std::string::npos && c.socketPath[0] != '/')
        return failf(EINVAL,
                     "--socket {}: ambiguous: more than one '=' (a VM name cannot hold '='; a "
                     "path that does must be absolute: NAME=/dir/a=b.sock)",
                     arg);
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
        else if (key == "max-rows" || key == "max-bytes" || key == "max-guests" ||
                 key == "guest-rate" || key == "guest-byte-rate" || key == "host-facts-interval") {
            auto v = parseInRange(numberRange(key), a);
            if (a.empty() || !b.empty())
                return bad();
            if (!v)
                return failf(EINVAL, "{}:{}: {} {}", path, n, key, v.error().message);
            // Integers below 2^53 (the table's bounds): exact in the double.
            if (key == "max-rows")
                o.maxRowsPerVm = static_cast<std::size_t>(*v);
            else if (key == "max-bytes")
                o.maxBytesPerVm = static_cast<std::size_t>(*v);
            else if (key == "max-guests")
                o.maxChannels = static_cast<std::size_t>(*v);
            else if (key == "guest-rate")
                o.messagesPerSecond = *v;
            else if (key == "guest-byte-rate")
                o.bytesPerSecond = *v;
            else
                o.hostFactsIntervalMs = static_cast<int>(*v) * 1000;
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
