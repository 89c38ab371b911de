#include <catch2/catch.hpp>

#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/page_walk.h"
#include "base/unique_fd.h"
#include "base/unique_mapping.h"

using namespace daxprobe;

namespace
{

// A shared mapping of `mapped` pages of a file `size` bytes long: a page
// wholly beyond the end raises a real SIGBUS, as a poisoned pmem page does.
struct ShortFile {
    long page = ::sysconf(_SC_PAGESIZE);
    UniqueFD fd;
    UniqueMapping map;
    ShortFile(std::size_t size, std::size_t mapped)
    {
        char name[] = "/tmp/daxprobe-walk-XXXXXX";
        fd.reset(::mkstemp(name));
        ::unlink(name);
        REQUIRE(fd);
        REQUIRE(::ftruncate(fd.get(), static_cast<off_t>(size)) == 0);
        map = UniqueMapping(
            ::mmap(nullptr, mapped * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0),
            mapped * page);
        REQUIRE(map);
    }
};

} // namespace

TEST_CASE("a walk over whole pages touches each", "[base][pagewalk]")
{
    ShortFile f(3 * 4096, 3);
    auto step = static_cast<std::size_t>(f.page);
    PageWalk w = touchPages(f.map.get(), 3 * step, step, PageTouch::Fill);
    CHECK_FALSE(w.sigbusOffset);
    CHECK(w.pagesTouched == 3);
    CHECK(static_cast<unsigned char *>(f.map.get())[2 * step] == kFillByte);
    w = touchPages(f.map.get(), 3 * step, step, PageTouch::Rewrite);
    CHECK(w.pagesTouched == 3);
    CHECK(static_cast<unsigned char *>(f.map.get())[step] == kFillByte);
}

TEST_CASE("a SIGBUS ends the walk at its page, not the process", "[base][pagewalk]")
{
    auto how = GENERATE(PageTouch::Read, PageTouch::Rewrite, PageTouch::Fill);
    ShortFile f(4096 + 1, 4); // pages 0 and 1 hold the file; page 2 is beyond it
    auto step = static_cast<std::size_t>(f.page);
    PageWalk w = touchPages(f.map.get(), 4 * step, step, how);
    REQUIRE(w.sigbusOffset);
    CHECK(*w.sigbusOffset == 2 * step);
    CHECK(w.pagesTouched == 2);

    // Again: the handler is installed per walk, and a second fault is caught too.
    w = touchPages(f.map.get(), 4 * step, step, PageTouch::Read);
    CHECK(w.sigbusOffset == std::optional<std::uint64_t>(2 * step));
}

TEST_CASE("a walk leaves SIGBUS's disposition as it found it", "[base][pagewalk]")
{
    ShortFile f(0, 1);
    struct sigaction before {
    }, after{};
    REQUIRE(::sigaction(SIGBUS, nullptr, &before) == 0);
    PageWalk w = touchPages(f.map.get(), static_cast<std::size_t>(f.page),
                            static_cast<std::size_t>(f.page), PageTouch::Read);
    CHECK(w.sigbusOffset == std::optional<std::uint64_t>(0));
    REQUIRE(::sigaction(SIGBUS, nullptr, &after) == 0);
    CHECK(after.sa_handler == before.sa_handler);
    sigset_t mask;
    REQUIRE(::sigprocmask(SIG_BLOCK, nullptr, &mask) == 0);
    CHECK_FALSE(sigismember(&mask, SIGBUS)); // unblocked again after the jump
}
