// The kernel's uevent datagrams, captured, and hostile ones (the bytes come
// from a socket: bounded, never trusted).
#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <string>

#include "probes/readers/uevent.h"

using namespace daxprobe;

namespace
{

std::string fixture(const std::string &name)
{
    std::ifstream in(std::string(FIXTURES_DIR) + "/uevent/" + name, std::ios::binary);
    REQUIRE(in);
    return {std::istreambuf_iterator<char>(in), {}};
}

std::string datagram(std::string header, std::initializer_list<std::string> vars)
{
    std::string s = header + '\0';
    for (const auto &v : vars)
        s += v + '\0';
    return s;
}

} // namespace

TEST_CASE("a captured kernel uevent parses", "[uevent]")
{
    // Host kernel 6.x: `echo change > /sys/block/loop7/uevent`, read from
    // NETLINK_KOBJECT_UEVENT group 1.
    auto ev = parseUevent(fixture("block-change-loop7.bin"));
    REQUIRE(ev);
    CHECK(ev->action == "change");
    CHECK(ev->devpath == "/devices/virtual/block/loop7");
    CHECK(ev->subsystem == "block");
    CHECK(ev->devname == "loop7");
    CHECK(ev->devtype == "disk");
    CHECK(isPmemUevent(*ev));
}

TEST_CASE("every cut of a captured uevent parses or is an error", "[uevent]")
{
    std::string bytes = fixture("block-change-loop7.bin");
    for (std::size_t n = 0; n < bytes.size(); ++n) {
        auto ev = parseUevent(std::string_view(bytes).substr(0, n));
        // Cut before SUBSYSTEM's NUL: an error; then only at a NUL.
        if (ev) {
            CHECK(ev->subsystem == "block");
            CHECK(bytes[n - 1] == '\0');
        }
    }
}

TEST_CASE("uevents the agent acts on: nd, dax, cxl, block", "[uevent]")
{
    for (const char *sub : {"nd", "dax", "cxl", "block"}) {
        auto ev =
            parseUevent(datagram(std::string("add@/devices/x"), {"ACTION=add", "DEVPATH=/devices/x",
                                                                 std::string("SUBSYSTEM=") + sub}));
        REQUIRE(ev);
        CHECK(isPmemUevent(*ev));
    }
    for (const char *sub : {"net", "ndx", "nd ", "blockx", "memory"}) {
        auto ev =
            parseUevent(datagram(std::string("add@/devices/x"), {"ACTION=add", "DEVPATH=/devices/x",
                                                                 std::string("SUBSYSTEM=") + sub}));
        REQUIRE(ev);
        CHECK_FALSE(isPmemUevent(*ev));
    }
}

TEST_CASE("hostile uevent bytes are errors naming why", "[uevent]")
{
    auto why = [](const std::string &bytes) {
        auto ev = parseUevent(bytes);
        REQUIRE_FALSE(ev);
        return ev.error().describe();
    };
    const std::initializer_list<std::string> ok = {"ACTION=add", "DEVPATH=/devices/x",
                                                   "SUBSYSTEM=nd"};
    REQUIRE(parseUevent(datagram("add@/devices/x", ok)));

    CHECK_THAT(why(std::string(kMaxUeventBytes + 1, 'A')), Catch::Contains("at most"));
    CHECK_THAT(why("add@/devices/x"), Catch::Contains("without a NUL"));
    CHECK_THAT(why(datagram("libudev", ok)), Catch::Contains("udev monitor"));
    for (const char *h : {"add/devices/x", "@/devices/x", "add@", "add@devices"})
        CHECK_THAT(why(datagram(h, ok)), Catch::Contains("ACTION@DEVPATH"));
    CHECK_THAT(
        why(datagram("add@/devices/x", {"ACTION=add", "DEVPATH=/devices/y", "SUBSYSTEM=nd"})),
        Catch::Contains("do not match"));
    CHECK_THAT(why(datagram("remove@/devices/x", ok)), Catch::Contains("do not match"));
    CHECK_THAT(why(datagram("add@/devices/x", {"ACTION=add", "DEVPATH=/devices/x"})),
               Catch::Contains("without SUBSYSTEM"));
    for (const char *bad : {"NOEQUALS", "=value", "lower=x", "SP ACE=x"})
        CHECK_THAT(why(datagram("add@/devices/x",
                                {"ACTION=add", "DEVPATH=/devices/x", bad, "SUBSYSTEM=nd"})),
                   Catch::Contains("not KEY=VALUE"));
    std::string many = datagram("add@/devices/x", ok);
    for (std::size_t i = 0; i < kMaxUeventFields; ++i)
        many += "K=v" + std::string(1, '\0');
    CHECK_THAT(why(many), Catch::Contains("more than"));
    CHECK_THAT(why(datagram("add@/devices/x", ok) + "DEVNAME=pm"), Catch::Contains("truncated"));
}
