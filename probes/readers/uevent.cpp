#include "probes/readers/uevent.h"

#include <array>
#include <cerrno>

namespace daxprobe
{

namespace
{

// Variable names are the kernel's add_uevent_var() keys: upper case, digits, '_'.
bool validKey(std::string_view key)
{
    if (key.empty() || key.size() > 64)
        return false;
    for (char c : key)
        if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
            return false;
    return true;
}

} // namespace

Result<Uevent> parseUevent(std::string_view bytes)
{
    if (bytes.size() > kMaxUeventBytes)
        return failf(EMSGSIZE, "uevent of {} bytes (at most {})", bytes.size(), kMaxUeventBytes);
    std::size_t end = bytes.find('\0');
    if (end == std::string_view::npos)
        return failf(EINVAL, "uevent without a NUL after its header");
    std::string_view header = bytes.substr(0, end);
    if (header.starts_with("libudev"))
        return failf(EINVAL, "a udev monitor message, not the kernel's");
    std::size_t at = header.find('@');
    if (at == 0 || at == std::string_view::npos || at + 1 == header.size() || header[at + 1] != '/')
        return failf(EINVAL, "uevent header is not ACTION@DEVPATH");

    Uevent ev;
    std::size_t fields = 0;
    for (std::size_t pos = end + 1; pos < bytes.size();) {
        std::size_t next = bytes.find('\0', pos);
        // The kernel ends every variable with a NUL: without one it was cut.
        if (next == std::string_view::npos)
            return failf(EINVAL, "uevent truncated in variable {}", fields + 1);
        std::string_view field = bytes.substr(pos, next - pos);
        pos = next + 1;
        if (field.empty())
            continue;
        if (++fields > kMaxUeventFields)
            return failf(E2BIG, "uevent with more than {} variables", kMaxUeventFields);
        std::size_t eq = field.find('=');
        if (eq == std::string_view::npos || !validKey(field.substr(0, eq)))
            return failf(EINVAL, "uevent variable {} is not KEY=VALUE", fields);
        std::string_view key = field.substr(0, eq), value = field.substr(eq + 1);
        if (key == "ACTION")
            ev.action = value;
        else if (key == "DEVPATH")
            ev.devpath = value;
        else if (key == "SUBSYSTEM")
            ev.subsystem = value;
        else if (key == "DEVNAME")
            ev.devname = value;
        else if (key == "DEVTYPE")
            ev.devtype = value;
    }
    if (ev.action != header.substr(0, at) || ev.devpath != header.substr(at + 1))
        return failf(EINVAL, "uevent variables ACTION and DEVPATH do not match its header");
    if (ev.subsystem.empty())
        return failf(EINVAL, "uevent without SUBSYSTEM");
    return ev;
}

bool isPmemUevent(const Uevent &event)
{
    static constexpr std::array<std::string_view, 4> kSubsystems = {"nd", "dax", "cxl", "block"};
    for (auto s : kSubsystems)
        if (event.subsystem == s)
            return true;
    return false;
}

} // namespace daxprobe
