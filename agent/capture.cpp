#include "agent/capture.h"

#include <cerrno>
#include <filesystem>
#include <fstream>

#include "agent/report_json.h"

namespace daxprobe
{

Result<void> CaptureWriter::write(const std::string &relPath, std::string_view content)
{
    if (relPath.find("..") != std::string::npos)
        return fail("capture: refusing path with '..': " + relPath, EINVAL);
    std::filesystem::path path = std::filesystem::path(dir_) / relPath;
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec)
        return fail("capture: mkdir " + path.parent_path().string() + ": " + ec.message());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    if (!out)
        return fail("capture: write " + path.string(), EIO);
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
