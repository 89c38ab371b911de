#include "base/logging.h"

#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace daxprobe
{

namespace
{

// "<N>": the syslog priority of the line's level, which the journal reads
// from the start of each line a service writes (sd-daemon(3)), so that
// `journalctl -p warning` works without linking libsystemd (and the
// libraries it pulls in) into a guest agent that must start cheaply.
class SyslogPriorityPrefix : public spdlog::custom_flag_formatter
{
  public:
    void format(const spdlog::details::log_msg &msg, const std::tm &,
                spdlog::memory_buf_t &dest) override
    {
        // trace, debug, info, warn, err, critical, off
        static constexpr char priority[] = {'7', '7', '6', '4', '3', '2', '0'};
        auto level = static_cast<std::size_t>(msg.level);
        const char prefix[] = {'<', priority[level < sizeof(priority) ? level : 6], '>'};
        dest.append(prefix, prefix + sizeof(prefix));
    }
    std::unique_ptr<custom_flag_formatter> clone() const override
    {
        return std::make_unique<SyslogPriorityPrefix>();
    }
};

} // namespace

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
    auto logger = spdlog::stderr_color_mt(name);
    if (journal) {
        // The journal adds its own timestamp and unit name: priority and message.
        auto formatter = std::make_unique<spdlog::pattern_formatter>();
        formatter->add_flag<SyslogPriorityPrefix>('*').set_pattern("%*%v");
        logger->set_formatter(std::move(formatter));
    }
    spdlog::set_default_logger(logger);
    return journal;
}

} // namespace daxprobe
