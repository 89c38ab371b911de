#include "agent/check/capture.h"

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/json_text.h"

namespace daxprobe
{

Result<CaptureWriter> CaptureWriter::create(const std::string &dir)
{
    std::string path = dir;
    while (path.size() > 1 && path.back() == '/')
        path.pop_back();
    auto parent = openParent(path);
    if (!parent)
        return failf(parent.error().code, "capture: {}: {}", path, parent.error().message);
    auto made = makeDirExclusive(parent->dir.get(), parent->name, 0700);
    if (!made) {
        if (made.error().code == EEXIST)
            return failf(EEXIST, "capture: {} already exists (--capture makes a new directory)",
                         path);
        return failf(made.error().code, "capture: {}: {}", path, made.error().message);
    }
    return CaptureWriter(path, std::move(*made));
}

// The fd of relDir ("" for the top), each level made by us on first use.
Result<int> CaptureWriter::directory(const std::string &relDir)
{
    if (relDir.empty())
        return top_.get();
    if (auto it = dirs_.find(relDir); it != dirs_.end())
        return it->second.get();
    std::size_t slash = relDir.rfind('/');
    auto parent = directory(slash == std::string::npos ? "" : relDir.substr(0, slash));
    if (!parent)
        return parent;
    auto made = makeDirExclusive(*parent, relDir.substr(slash + 1), 0755);
    if (!made)
        return failf(made.error().code, "capture: {}/{}: {}", path_, relDir, made.error().message);
    return dirs_.emplace(relDir, std::move(*made)).first->second.get();
}

Result<void> CaptureWriter::write(const std::string &relPath, std::string_view content)
{
    for (std::size_t start = 0; start <= relPath.size();) {
        std::size_t end = std::min(relPath.find('/', start), relPath.size());
        std::string_view part(relPath.data() + start, end - start);
        if (part.empty() || part == "." || part == "..")
            return fail("capture: refusing path " + relPath, EINVAL);
        start = end + 1;
    }
    std::size_t slash = relPath.rfind('/');
    auto dir = directory(slash == std::string::npos ? "" : relPath.substr(0, slash));
    if (!dir)
        return tl::unexpected(dir.error());
    std::string name = relPath.substr(slash + 1);
    UniqueFD fd;
    if (auto seen = files_.find(relPath); seen != files_.end()) {
        fd.reset(::openat(*dir, name.c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC));
        struct stat st {
        };
        if (!fd || ::fstat(fd.get(), &st) != 0)
            return failf(errno, "capture: reopen {}/{}", path_, relPath);
        if ((FileId{st.st_dev, st.st_ino}) != seen->second)
            return failf(ESTALE, "capture: {}/{} was replaced", path_, relPath);
        if (::ftruncate(fd.get(), 0) != 0)
            return failf(errno, "capture: truncate {}/{}", path_, relPath);
    } else {
        auto made = createExclusive(*dir, name, O_WRONLY, 0644);
        if (!made)
            return failf(made.error().code, "capture: {}/{}: {}", path_, relPath,
                         made.error().message);
        files_.emplace(relPath, made->id);
        fd = std::move(made->fd);
    }
    if (auto w = writeAll(fd.get(), content, path_ + "/" + relPath); !w)
        return failf(w.error().code, "capture: {}", w.error().message);
    return {};
}

void CaptureWriter::addFile(const std::string &relPath, std::string_view content)
{
    auto r = write(relPath, content);
    if (!r && error_.empty())
        error_ = r.error().describe();
}

void CaptureWriter::writeJson(const std::string &name, const nlohmann::json &j)
{
    addFile(name, jsonText(j) + "\n");
}

} // namespace daxprobe
