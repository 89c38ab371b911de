#include "probes/readers/mountinfo.h"

#include <cerrno>

#include "probes/readers/text_util.h"

namespace daxprobe
{

namespace
{

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape(std::string_view s)
{
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '3' &&
            s[i + 2] >= '0' && s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
            out.push_back(
                static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0')));
            i += 3;
        } else {
            out.push_back(s[i]);
        }
    }
    return out;
}

bool parseDevice(std::string_view s, unsigned &major, unsigned &minor)
{
    auto colon = s.find(':');
    if (colon == std::string_view::npos)
        return false;
    auto ma = parseU64(s.substr(0, colon));
    auto mi = parseU64(s.substr(colon + 1));
    if (!ma || !mi || *ma > 0xfffff || *mi > 0xfffff)
        return false;
    major = static_cast<unsigned>(*ma);
    minor = static_cast<unsigned>(*mi);
    return true;
}

} // namespace

Result<std::vector<MountEntry>> parseMountinfo(std::string_view text)
{
    std::vector<MountEntry> mounts;
    int lineNo = 0;
    for (std::string_view line : splitLines(text)) {
        ++lineNo;
        if (trim(line).empty())
            continue;
        auto f = splitFields(line);
        // 6 fixed fields, zero or more optional fields, "-", then 3 more.
        std::size_t sep = 6;
        while (sep < f.size() && f[sep] != "-")
            ++sep;
        if (f.size() < 6 || sep >= f.size())
            return failf(EINVAL, "mountinfo line {}: too few fields", lineNo);
        if (sep + 2 >= f.size())
            return failf(EINVAL, "mountinfo line {}: too few fields after '-'", lineNo);
        MountEntry m;
        auto id = parseU64(f[0]);
        auto parent = parseU64(f[1]);
        if (!id || !parent || *id > INT32_MAX || *parent > INT32_MAX)
            return failf(EINVAL, "mountinfo line {}: bad mount id", lineNo);
        m.mountId = static_cast<int>(*id);
        m.parentId = static_cast<int>(*parent);
        if (!parseDevice(f[2], m.major, m.minor))
            return failf(EINVAL, "mountinfo line {}: bad major:minor", lineNo);
        m.root = unescape(f[3]);
        m.mountPoint = unescape(f[4]);
        m.mountOptions = std::string(f[5]);
        m.fstype = unescape(f[sep + 1]);
        m.source = unescape(f[sep + 2]);
        m.superOptions = sep + 3 < f.size() ? std::string(f[sep + 3]) : std::string();
        mounts.push_back(std::move(m));
    }
    return mounts;
}

DaxOption daxOption(const MountEntry &mount)
{
    DaxOption found = DaxOption::None;
    for (const std::string *opts : {&mount.mountOptions, &mount.superOptions}) {
        for (std::string_view o : splitFields(*opts, ',')) {
            if (o == "dax" || o == "dax=always")
                found = DaxOption::Always;
            else if (o == "dax=inode")
                found = DaxOption::Inode;
            else if (o == "dax=never")
                found = DaxOption::Never;
        }
    }
    return found;
}

bool mountedReadOnly(const MountEntry &mount)
{
    for (const std::string *opts : {&mount.mountOptions, &mount.superOptions})
        for (std::string_view o : splitFields(*opts, ','))
            if (o == "ro")
                return true;
    return false;
}

const char *daxOptionName(DaxOption option)
{
    switch (option) {
    case DaxOption::Always:
        return "always";
    case DaxOption::Inode:
        return "inode";
    case DaxOption::Never:
        return "never";
    case DaxOption::None:
        break;
    }
    return nullptr;
}

} // namespace daxprobe
