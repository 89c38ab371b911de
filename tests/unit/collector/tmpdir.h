#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

// A fresh directory under $TMPDIR, removed with everything in it.
class TempDir
{
  public:
    TempDir()
    {
        std::string tmpl =
            (std::filesystem::temp_directory_path() / "daxprobe-test-XXXXXX").string();
        path_ = ::mkdtemp(tmpl.data()) ? tmpl : std::string();
    }
    ~TempDir()
    {
        std::error_code ec;
        if (!path_.empty())
            std::filesystem::remove_all(path_, ec);
    }
    TempDir(const TempDir &) = delete;
    TempDir &operator=(const TempDir &) = delete;
    const std::string &path() const { return path_; }

  private:
    std::string path_;
};
