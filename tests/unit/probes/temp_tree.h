#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

// A hand-made root (sys/..., proc/...) in a fresh directory, removed with
// everything in it: what the probe tests read through a Root.
struct TempTree {
    std::filesystem::path dir;
    TempTree()
    {
        char tmpl[] = "/tmp/daxprobe-root-XXXXXX";
        dir = ::mkdtemp(tmpl);
    }
    ~TempTree() { std::filesystem::remove_all(dir); }
    TempTree(const TempTree &) = delete;
    TempTree &operator=(const TempTree &) = delete;
    void write(const std::string &rel, const std::string &content)
    {
        std::filesystem::create_directories((dir / rel).parent_path());
        std::ofstream(dir / rel, std::ios::binary) << content;
    }
};
