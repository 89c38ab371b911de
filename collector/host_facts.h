#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "base/root.h"

namespace daxprobe::collector
{

// One memory-backend-file that backs an emulated NVDIMM or a virtio-pmem
// device.
struct NvdimmBackend {
    std::string id, memPath;
    // nvdimm | virtio-pmem-pci. virtio-pmem's guest flushes (fsync/msync; it
    // refuses MAP_SYNC) become an fsync of this file: with share=on the file
    // holds what the guest flushed.
    std::string device = "nvdimm";
    bool share = false, pmem = false;
    bool onDevDax = false, onHostDaxFs = false;
    std::string hostFsType;               // of the file's mount, "" if unknown
    unsigned long long residentBytes = 0; // Rss of its mapping(s) in QEMU
    bool mapped = false;                  // the path was found in smaps
    // none: share=off, guest writes never reach the file;
    // page_cache: reaches the file through the host page cache, not power-safe;
    // pmem: shared and on persistent memory (or pmem=on asserted).
    std::string persistence;
};

struct QemuFacts {
    int pid = 0;
    unsigned long long rssBytes = 0, pssBytes = 0;
    std::vector<NvdimmBackend> backends;
    std::vector<std::string> errors;
};

// Backends of -device nvdimm,memdev=ID (and virtio-pmem-pci,memdev=ID) from a QEMU command line
// (argv), in both the key=value and the JSON (libvirt) -object/-device syntax.
std::vector<NvdimmBackend> parseNvdimmBackends(const std::vector<std::string> &argv);

// Everything above for one QEMU pid, read through root (tests: a fixture dir).
QemuFacts readQemuFacts(const Root &root, int pid);

nlohmann::json toJson(const QemuFacts &facts);

// Parses "Key:   123 kB" lines; returns bytes or 0.
unsigned long long smapsField(std::string_view text, std::string_view key);

} // namespace daxprobe::collector
