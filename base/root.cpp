#include "root.h"

#include <cerrno>
#include <cstdlib>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

namespace daxprobe {

Result<Root> Root::open(const std::string &dir)
{
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return failf(errno, "open root {}", dir);
    return Root(UniqueFD(fd), dir);
}

Root Root::system()
{
    auto root = open("/");
    if (!root)
        std::abort(); // no "/" means no process to speak of
    return std::move(*root);
}

std::string Root::relative(std::string_view path)
{
    while (!path.empty() && path.front() == '/')
        path.remove_prefix(1);
    return path.empty() ? std::string(".") : std::string(path);
}

Result<std::string> Root::readFile(std::string_view path, std::size_t maxBytes) const
{
    std::string rel = relative(path);
    UniqueFD fd(::openat(fd_.get(), rel.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
    if (!fd)
        return failf(errno, "open {}", rel);

    // procfs and sysfs report size 0, so read until EOF.
    std::string out;
    char buf[8192];
    for (;;) {
        ssize_t n = ::read(fd.get(), buf, sizeof(buf));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return failf(errno, "read {}", rel);
        }
        if (n == 0)
            break;
        if (out.size() + static_cast<std::size_t>(n) > maxBytes)
            return failf(EFBIG, "read {}: larger than {} bytes", rel, maxBytes);
        out.append(buf, static_cast<std::size_t>(n));
    }
    noteRead(rel, out);
    return out;
}

void Root::noteRead(std::string_view path, std::string_view content) const
{
    if (recorder_)
        (*recorder_)(relative(path), content);
}

Result<std::string> Root::readAttr(std::string_view path) const
{
    auto text = readFile(path, 4096);
    if (!text)
        return text;
    while (!text->empty() && (text->back() == '\n' || text->back() == '\0'))
        text->pop_back();
    return text;
}

Result<unsigned long long> Root::readUnsigned(std::string_view path) const
{
    auto text = readAttr(path);
    if (!text)
        return tl::unexpected(text.error());
    errno = 0;
    char *end = nullptr;
    unsigned long long v = std::strtoull(text->c_str(), &end, 0);
    if (errno != 0 || end == text->c_str() || *end != '\0' || text->front() == '-')
        return failf(EINVAL, "{}: not a number: '{}'", relative(path), *text);
    return v;
}

Result<std::vector<std::string>> Root::listDir(std::string_view path) const
{
    std::string rel = relative(path);
    int fd = ::openat(fd_.get(), rel.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return failf(errno, "open directory {}", rel);
    DIR *dir = ::fdopendir(fd);
    if (!dir) {
        int err = errno;
        ::close(fd);
        return failf(err, "open directory {}", rel);
    }
    std::vector<std::string> names;
    while (dirent *e = ::readdir(dir)) {
        std::string_view name = e->d_name;
        if (name != "." && name != "..")
            names.emplace_back(name);
    }
    ::closedir(dir);
    std::sort(names.begin(), names.end());
    return names;
}

bool Root::exists(std::string_view path) const
{
    std::string rel = relative(path);
    return ::faccessat(fd_.get(), rel.c_str(), F_OK, 0) == 0;
}

Result<std::string> Root::readLink(std::string_view path) const
{
    std::string rel = relative(path);
    char buf[4096];
    ssize_t n = ::readlinkat(fd_.get(), rel.c_str(), buf, sizeof(buf) - 1);
    if (n < 0)
        return failf(errno, "readlink {}", rel);
    return std::string(buf, static_cast<std::size_t>(n));
}

} // namespace daxprobe
