#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"

namespace daxprobe
{

// A filesystem root that every procfs/sysfs/ACPI read goes through, so tests
// can point it at tests/fixtures/<scenario>/ (hwloc's HWLOC_FSROOT, systemd's
// chase() with a root). Paths are relative to the root, with or without a
// leading '/'.
//
// Any root but "/" is confined: nothing read through it resolves outside it
// (openBeneath), so a hostile capture cannot make --replay read host files.
// Every file is opened O_NONBLOCK and its type checked before a read, so a
// FIFO or a device planted in a tree is an error, not a hang.
class Root
{
  public:
    static constexpr std::size_t kDefaultMaxBytes = 1 << 20;

    static Result<Root> open(const std::string &dir);
    static Root system();

    // Whole file, at most maxBytes (a larger file is an error, not a silent cut).
    Result<std::string> readFile(std::string_view path,
                                 std::size_t maxBytes = kDefaultMaxBytes) const;
    // A sysfs attribute: small, trailing newline stripped (ndctl's __sysfs_read_attr).
    Result<std::string> readAttr(std::string_view path) const;
    Result<unsigned long long> readUnsigned(std::string_view path) const;
    Result<std::vector<std::string>> listDir(std::string_view path) const;
    bool exists(std::string_view path) const;
    // Target of a symlink, as the kernel wrote it.
    Result<std::string> readLink(std::string_view path) const;

    enum FileKind : unsigned { kRegular = 1, kCharDevice = 2 };
    // Opens for reading, O_NONBLOCK (kept), only if the file is one of
    // `kinds`: the one way to read a node like /dev/kmsg through a Root.
    Result<UniqueFD> openForRead(std::string_view path, unsigned kinds = kRegular) const;

    // Capture support: every successful readFile()/readAttr() is also handed
    // to the recorder, so a live run can be replayed later as a fixture tree.
    using Recorder = std::function<void(const std::string &path, std::string_view content)>;
    void setRecorder(Recorder recorder)
    {
        recorder_ = std::make_shared<Recorder>(std::move(recorder));
    }
    bool recording() const { return recorder_ != nullptr; }
    // For content not read through readFile (e.g. /dev/kmsg records).
    void noteRead(std::string_view path, std::string_view content) const;

    const std::string &path() const { return dir_; }
    // The directory fd, for *at() calls that only stat (collector discovery).
    int fd() const { return fd_.get(); }
    bool confined() const { return confined_; }

  private:
    Root(UniqueFD fd, std::string dir, bool confined)
        : fd_(std::move(fd)), dir_(std::move(dir)), confined_(confined)
    {
    }
    static std::string relative(std::string_view path);
    Result<UniqueFD> openRelative(const std::string &rel, int flags) const;

    UniqueFD fd_;
    std::string dir_;
    bool confined_ = true;
    std::shared_ptr<Recorder> recorder_;
};

// A file a user named on the command line (--path): stat()ed first, so a FIFO,
// a device or a directory is refused without being opened (opening a FIFO
// blocks; opening some devices has side effects), then opened O_NONBLOCK and
// checked to be the same regular file. O_NONBLOCK is cleared before return.
Result<UniqueFD> openRegularFile(const std::string &path, int flags);

// "a FIFO", "a directory", ... for error messages.
const char *fileKindName(unsigned mode);

} // namespace daxprobe
