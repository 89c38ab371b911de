#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "base/root.h"

namespace daxprobe::collector
{

// One memory-backend-file that backs a guest's persistent memory: an emulated
// NVDIMM, a virtio-pmem device or a CXL type-3 device's pmem.
struct NvdimmBackend {
    std::string id, memPath;
    // nvdimm | virtio-pmem-pci | cxl-type3. virtio-pmem's guest flushes
    // (fsync/msync; it refuses MAP_SYNC) become an fsync of this file: with
    // share=on the file holds what the guest flushed.
    std::string device = "nvdimm";
    bool share = false, pmem = false;
    bool onDevDax = false, onHostDaxFs = false;
    std::string hostFsType;               // of the file's mount, "" if unknown
    unsigned long long residentBytes = 0; // Rss of its mapping(s) in QEMU
    bool mapped = false;                  // the path was found in smaps
    // QEMU advised MADV_HUGEPAGE on the mapping (smaps VmFlags "hg"): the
    // host kernel then reads two 2 MiB folios around each first touch of the
    // file, whatever its device's read_ahead_kb (collector/read_around.h).
    bool hugepageAdvised = false;
    // none: share=off, guest writes never reach the file;
    // page_cache: reaches the file through the host page cache, not power-safe;
    // pmem: shared and on persistent memory (or pmem=on asserted).
    std::string persistence;
};

// A file whose host page cache a guest's memory use depends on: an
// NVDIMM/virtio-pmem backend, another memory-backend-file, or a disk image
// (with the backing files of a qcow2 overlay). Measured by
// measureBackingFiles (backing_files.h), keyed by (dev, ino) so a file that
// several VMs share is counted once per host.
struct BackingFile {
    std::string path;
    // nvdimm | virtio-pmem-pci | cxl-type3 | cxl-type3-volatile | cxl-lsa | memory | drive |
    // qcow2-backing, or the driver of another device with a memdev=
    std::string role;
    std::string format; // a -drive's format= (qcow2: its backing chain is followed)
    std::uint64_t dev = 0, ino = 0, sizeBytes = 0;
    std::uint64_t cachedBytes = 0; // host page cache of the file
    std::string method;            // cachestat | mincore | not_applicable; "" until measured
    std::string error;             // why it could not be measured
    // read_ahead_kb of the block device holding it (a partition's: its
    // disk's); nullopt when it is on none (tmpfs) or it could not be read
    std::optional<std::uint64_t> readAheadKb;
    std::string readAheadPath; // the sysfs file it was read from
};

struct QemuFacts {
    int pid = 0;
    unsigned long long rssBytes = 0, pssBytes = 0;
    std::vector<NvdimmBackend> backends;
    std::vector<std::string> errors;
    unsigned long long anonBytes = 0; // smaps_rollup Anonymous: guest RAM and QEMU's heap
    std::vector<BackingFile> files;
};

// Backends of -device nvdimm,memdev=ID (virtio-pmem-pci,memdev=ID, cxl-type3,memdev=ID or
// persistent-memdev=ID) from a QEMU command line
// (argv), in both the key=value and the JSON (libvirt) -object/-device syntax.
std::vector<NvdimmBackend> parseNvdimmBackends(const std::vector<std::string> &argv);

// Every file a QEMU command line names as guest memory or disk: the
// mem-path of each memory-backend-file, `-drive file=` and `-blockdev
// driver=file,filename=` (both syntaxes), each path once, in order.
// Protocols (nbd:, http:) and relative paths are left out.
std::vector<BackingFile> parseBackingFiles(const std::vector<std::string> &argv);

// Everything above for one QEMU pid, read through root (tests: a fixture dir).
QemuFacts readQemuFacts(const Root &root, int pid);

nlohmann::json toJson(const QemuFacts &facts);

// Parses "Key:   123 kB" lines; returns bytes or 0.
unsigned long long smapsField(std::string_view text, std::string_view key);

} // namespace daxprobe::collector
