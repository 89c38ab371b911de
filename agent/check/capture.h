#pragma once

#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "base/safe_files.h"
#include "base/unique_fd.h"

namespace daxprobe
{

// Writes what a live check read into a directory shaped like the root it
// came from (proc/..., sys/...), plus live.json: a fixture scenario, or a
// bundle a user can attach to a bug report and we can --replay.
//
// Run as root, it writes only into a directory it makes itself: DIR must not
// exist (no symlink, nobody's directory reused), and everything inside is
// made relative to directory fds it created (base/safe_files.h), so no name
// another user plants or renames is ever followed.
class CaptureWriter
{
  public:
    // Makes DIR (mode 0700; its parent must exist) and holds it open.
    static Result<CaptureWriter> create(const std::string &dir);

    void addFile(const std::string &relPath, std::string_view content);
    void writeJson(const std::string &name, const nlohmann::json &j);
    // First failure, if any: a capture that lost a file must say so.
    const std::string &error() const { return error_; }

  private:
    CaptureWriter(std::string path, UniqueFD dir) : path_(std::move(path)), top_(std::move(dir)) {}
    Result<void> write(const std::string &relPath, std::string_view content);
    Result<int> directory(const std::string &relDir);

    std::string path_;
    UniqueFD top_;
    std::map<std::string, UniqueFD> dirs_; // every one made by this writer
    std::map<std::string, FileId> files_;  // a file read twice is rewritten
    std::string error_;
};

} // namespace daxprobe
