#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/result.h"

namespace daxprobe
{

// Writes what a live check read into a directory shaped like the root it
// came from (proc/..., sys/...), plus live.json: a fixture scenario, or a
// bundle a user can attach to a bug report and we can --replay.
class CaptureWriter
{
  public:
    explicit CaptureWriter(std::string dir) : dir_(std::move(dir)) {}

    void addFile(const std::string &relPath, std::string_view content);
    void writeJson(const std::string &name, const nlohmann::json &j);
    // First failure, if any: a capture that lost a file must say so.
    const std::string &error() const { return error_; }

  private:
    Result<void> write(const std::string &relPath, std::string_view content);

    std::string dir_;
    std::string error_;
};

} // namespace daxprobe
