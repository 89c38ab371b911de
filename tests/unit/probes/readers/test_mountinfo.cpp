#include <catch2/catch.hpp>

#include "probes/readers/mountinfo.h"

using namespace daxprobe;

TEST_CASE("mountinfo lines are split into their fields", "[parser][mountinfo]")
{
    auto m = parseMountinfo(
        "22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:5 - proc proc rw\n"
        "31 22 259:0 / /mnt/pmem rw,relatime - ext4 /dev/pmem0 rw,dax=always\n"
        "32 22 259:1 /sub /mnt/with\\040space rw master:1 propagate_from:2 - xfs /dev/pmem1 "
        "rw,attr2,inode64,logbufs=8,sunit=4096,swidth=4096,noquota\n");
    REQUIRE(m);
    REQUIRE(m->size() == 3);
    const MountEntry &e = (*m)[1];
    CHECK(e.mountId == 31);
    CHECK(e.parentId == 22);
    CHECK(e.major == 259);
    CHECK(e.minor == 0);
    CHECK(e.mountPoint == "/mnt/pmem");
    CHECK(e.fstype == "ext4");
    CHECK(e.source == "/dev/pmem0");
    CHECK(e.superOptions == "rw,dax=always");
    CHECK((*m)[2].mountPoint == "/mnt/with space");
    CHECK((*m)[2].root == "/sub");
    CHECK((*m)[2].fstype == "xfs");
}

TEST_CASE("dax options are read from mount and superblock options", "[parser][mountinfo]")
{
    MountEntry e;
    CHECK(daxOption(e) == DaxOption::None);
    e.superOptions = "rw,dax=always";
    CHECK(daxOption(e) == DaxOption::Always);
    e.superOptions = "rw,attr2,dax=never";
    CHECK(daxOption(e) == DaxOption::Never);
    e.superOptions = "rw,dax=inode";
    CHECK(daxOption(e) == DaxOption::Inode);
    e.superOptions = "rw,dax"; // older kernels
    CHECK(daxOption(e) == DaxOption::Always);
    e.superOptions = "rw,daxsomething,nodax";
    CHECK(daxOption(e) == DaxOption::None);
    CHECK(daxOptionName(DaxOption::Always) == std::string("always"));
    CHECK(daxOptionName(DaxOption::None) == nullptr);
}

TEST_CASE("malformed mountinfo is rejected", "[parser][mountinfo]")
{
    CHECK_FALSE(parseMountinfo("31 22 259:0 / /mnt rw\n"));                 // no separator
    CHECK_FALSE(parseMountinfo("31 22 259:0 / /mnt rw - ext4\n"));          // no source
    CHECK_FALSE(parseMountinfo("x 22 259:0 / /mnt rw - ext4 /dev/a rw\n")); // bad id
    CHECK_FALSE(parseMountinfo("31 22 2590 / /mnt rw - ext4 /dev/a rw\n")); // bad dev
    CHECK_FALSE(parseMountinfo("31 22 259:x / /mnt rw - ext4 /dev/a rw\n"));
    auto empty = parseMountinfo("");
    REQUIRE(empty);
    CHECK(empty->empty());
    // A trailing backslash or a short escape stays literal instead of reading past the end.
    auto odd = parseMountinfo("31 22 259:0 / /mnt\\04 rw - ext4 /dev/a\\ rw\n");
    REQUIRE(odd);
    CHECK((*odd)[0].mountPoint == "/mnt\\04");
    CHECK((*odd)[0].source == "/dev/a\\");
}
