#include "probes/readers/dax_evidence.h"

#include <cerrno>
#include <deque>
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "base/result.h"
#include "base/unique_fd.h"
#include "probes/readers/libpmem_loader.h"

#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE 0x03
#endif
#ifndef MAP_SYNC
#define MAP_SYNC 0x80000
#endif

namespace daxprobe
{

namespace
{

constexpr std::size_t kTestFileSize = 2 << 20; // one PMD, so the mapping can be huge-page

StatxEvidence statxAt(int dirfd, const char *path, int flags, const std::string &label)
{
    StatxEvidence ev;
    ev.file = label;
    struct statx stx {
    };
    if (::statx(dirfd, path, flags, STATX_BASIC_STATS, &stx) != 0) {
        ev.fail(Error{errno, "statx " + label}.describe());
        return ev;
    }
    decodeStatxAttributes(ev, stx.stx_attributes, stx.stx_attributes_mask);
    ev.observe();
    return ev;
}

} // namespace

StatxEvidence statxDax(const std::string &path)
{
    return statxAt(AT_FDCWD, path.c_str(), AT_STATX_SYNC_AS_STAT, path);
}

StatxEvidence statxDax(int fd, const std::string &label)
{
    return statxAt(fd, "", AT_EMPTY_PATH | AT_STATX_SYNC_AS_STAT, label);
}

std::string findRegularFile(const std::string &mountPoint, unsigned major, unsigned minor)
{
    // Breadth-first and bounded: a huge filesystem must not make the boot
    // check slow; a file near the top is as good as any.
    constexpr int kMaxEntries = 2000;
    int seen = 0;
    std::deque<std::string> dirs{mountPoint};
    while (!dirs.empty() && seen < kMaxEntries) {
        std::string dir = dirs.front();
        dirs.pop_front();
        DIR *d = ::opendir(dir.c_str());
        if (!d)
            continue;
        while (dirent *e = ::readdir(d)) {
            if (++seen > kMaxEntries)
                break;
            std::string name = e->d_name;
            if (name == "." || name == "..")
                continue;
            std::string path = dir == "/" ? "/" + name : dir + "/" + name;
            struct stat st {
            };
            if (::lstat(path.c_str(), &st) != 0)
                continue;
            if (::major(st.st_dev) != major || ::minor(st.st_dev) != minor)
                continue; // another mount below this one
            if (S_ISREG(st.st_mode)) {
                ::closedir(d);
                return path;
            }
            if (S_ISDIR(st.st_mode))
                dirs.push_back(path);
        }
        ::closedir(d);
    }
    return {};
}

MapSyncEvidence mapSyncCheck(const std::string &dir, StatxEvidence *statxOut)
{
    MapSyncEvidence ev;
    UniqueFD fd(::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
    if (!fd) {
        ev.skip(Error{errno, "cannot create a temporary file in " + dir}.describe());
        return ev;
    }
    if (int rc = ::posix_fallocate(fd.get(), 0, kTestFileSize); rc != 0) {
        ev.observe(Error{rc, "fallocate"}.describe());
        return ev;
    }
    if (statxOut)
        *statxOut = statxAt(fd.get(), "", AT_EMPTY_PATH,
                            (dir.ends_with('/') ? dir : dir + "/") + "(O_TMPFILE)");

    void *addr = ::mmap(nullptr, kTestFileSize, PROT_READ | PROT_WRITE,
                        MAP_SHARED_VALIDATE | MAP_SYNC, fd.get(), 0);
    if (addr == MAP_FAILED) {
        ev.observe(Error{errno, "mmap MAP_SYNC"}.describe());
    } else {
        ev.observe();
        ev.mapped = true;
        ::munmap(addr, kTestFileSize);
    }

    // libpmem's own verdict on the same kind of file: is_pmem is true only
    // when it got a MAP_SYNC (or device-dax) mapping. Loaded here, not at
    // program start: only this check needs it (LibPmem::shared).
    const Result<LibPmem> &pmem = LibPmem::shared();
    if (!pmem)
        return ev; // is_pmem stays unknown; the kernel's answer above stands

    std::size_t mapped = 0;
    int isPmem = 0;
    void *p = pmem->mapFile(dir.c_str(), kTestFileSize,
                            LibPmem::kFileCreate | LibPmem::kFileTmpfile, 0600, &mapped, &isPmem);
    if (p) {
        ev.isPmem = isPmem && pmem->isPmem(p, mapped);
        pmem->unmap(p, mapped);
    }
    return ev;
}

} // namespace daxprobe
