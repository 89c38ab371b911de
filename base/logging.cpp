#include "logging.h"

#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/systemd_sink.h>
#include <spdlog/spdlog.h>

namespace daxprobe
{

bool isJournalStream(const char *env, dev_t dev, ino_t ino)
{
    if (!env || !*env)
        return false;
    std::string_view s(env);
    auto colon = s.find(':');
    if (colon == std::string_view::npos)
        return false;
    // Both decimal, nothing else: a malformed value means "not the journal".
    auto number = [](std::string_view t, std::uintmax_t &out) {
        auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), out);
        return !t.empty() && ec == std::errc() && end == t.data() + t.size();
    };
    std::uintmax_t d = 0, i = 0;
    if (!number(s.substr(0, colon), d) || !number(s.substr(colon + 1), i))
        return false;
    return d == std::uintmax_t(dev) && i == std::uintmax_t(ino);
}

bool setupLogging(const std::string &name)
{
    spdlog::drop(name); // a second call replaces the logger, never throws
    struct stat st {
    };
    bool journal = ::fstat(STDERR_FILENO, &st) == 0 &&
                   isJournalStream(std::getenv("JOURNAL_STREAM"), st.st_dev, st.st_ino);
    if (journal) {
        // The journal adds its own timestamp and unit name: the message alone.
        auto sink = std::make_shared<spdlog::sinks::systemd_sink_mt>(name);
        auto logger = std::make_shared<spdlog::logger>(name, sink);
        logger->set_pattern("%v");
        spdlog::set_default_logger(logger);
    } else {
        spdlog::set_default_logger(spdlog::stderr_color_mt(name));
    }
    return journal;
}

} // namespace daxprobe
