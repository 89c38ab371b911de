// The struct pages of fsdax/devdax namespaces (issue 44, item 4), on the
// numbers real guests gave: namespace0.0 of tests/fixtures/fsdax-ext4 (a
// label-less 512 MiB namespace, region0/size 536870912, turned fsdax by
// `ndctl create-namespace -f -e namespace0.0 -m fsdax`: pfn0.0/size
// 526385152, map dev) and namespace0.0 of tests/fixtures/cxl-6.12 (fsdax
// map=mem, usable 266338304 of a 256 MiB namespace). The sizes are read from
// sysfs by test_sysfs_topology.cpp; the guests check the kernel's own
// numbers in tests/vm (check_struct_pages).
#include <catch2/catch.hpp>

#include "probes/judges/struct_pages.h"
#include "probes/judges/verdict.h"

using namespace daxprobe;

namespace
{

NdNamespace fsdax(const std::string &map, std::uint64_t raw, std::uint64_t usable)
{
    NdNamespace ns;
    ns.dev = "namespace0.0";
    ns.region = "region0";
    ns.mode = "fsdax";
    ns.map = map;
    ns.rawSize = raw;
    ns.size = usable;
    ns.align = 2u << 20;
    ns.blockdev = "pmem0";
    return ns;
}

} // namespace

TEST_CASE("struct pages: map=dev, in the namespace, the kernel's sizes", "[verdict][struct_pages]")
{
    Topology t;
    t.namespaces.push_back(fsdax("dev", 536870912, 526385152));
    auto costs = judgeStructPages(t);
    REQUIRE(costs.size() == 1);
    const auto &c = costs[0];
    CHECK(c.ns == "namespace0.0");
    CHECK(c.where == "namespace");
    CHECK(c.source == "kernel");
    // 10 MiB: 8 MiB of struct pages (512 MiB / 4 KiB x 64 B) and the 8 KiB
    // info area, aligned up to 2 MiB (drivers/nvdimm/pfn_devs.c).
    REQUIRE(c.bytes);
    CHECK(*c.bytes == 10u << 20);
    CHECK(c.verdict.code == code::StructPagesInNamespace);
    CHECK(c.verdict.severity == Severity::Ok);
    CHECK_THAT(c.verdict.summary, Catch::Contains("10 MiB of its 512 MiB"));
    CHECK_THAT(c.verdict.summary, Catch::Contains("8 MiB"));
    CHECK_THAT(c.verdict.remedy, Catch::Contains("sized to its content"));
    CHECK_THAT(c.verdict.remedy, !Catch::Contains("-M dev"));
    REQUIRE(c.verdict.evidence.size() == 1);
    CHECK_THAT(c.verdict.evidence[0].result, Catch::Contains("10485760 bytes given up"));
}

TEST_CASE("struct pages: map=mem, in guest RAM, computed", "[verdict][struct_pages]")
{
    Topology t;
    t.namespaces.push_back(fsdax("mem", 268435456, 266338304));
    auto costs = judgeStructPages(t);
    REQUIRE(costs.size() == 1);
    const auto &c = costs[0];
    CHECK(c.where == "guest_ram");
    CHECK(c.source == "computed");
    REQUIRE(c.bytes);
    CHECK(*c.bytes == 4u << 20); // 256 MiB / 4 KiB x 64 B, whatever the usable size
    CHECK(c.verdict.code == code::StructPagesInRam);
    CHECK_THAT(c.verdict.summary, Catch::Contains("4 MiB of guest RAM"));
    CHECK_THAT(c.verdict.remedy,
               Catch::Contains("ndctl create-namespace -f -e namespace0.0 -m fsdax -M dev"));
    CHECK_THAT(c.verdict.remedy, Catch::Contains("sized to its content"));

    // The appliance's 4 GiB root: 64 MiB.
    t.namespaces[0] = fsdax("mem", 4ull << 30, (4ull << 30) - (2u << 20));
    CHECK(*judgeStructPages(t)[0].bytes == 64u << 20);
}

TEST_CASE("struct pages: unknown without the namespace's own size, none without a map",
          "[verdict][struct_pages]")
{
    Topology t;
    auto old = fsdax("dev", 0, 526385152);
    old.rawSize.reset(); // a capture from before it was read
    t.namespaces.push_back(old);
    NdNamespace raw;
    raw.dev = "namespace1.0";
    raw.mode = "raw";
    raw.size = raw.rawSize.emplace(536870912);
    t.namespaces.push_back(raw);
    NdNamespace devdax = fsdax("mem", 268435456, 266338304);
    devdax.dev = "namespace0.2";
    devdax.mode = "devdax";
    t.namespaces.push_back(devdax);
    auto costs = judgeStructPages(t);
    REQUIRE(costs.size() == 2); // the raw namespace has none
    CHECK_FALSE(costs[0].bytes);
    CHECK(costs[0].source.empty());
    CHECK_THAT(costs[0].verdict.summary, Catch::Contains("unknown"));
    CHECK(costs[1].ns == "namespace0.2");
    CHECK(*costs[1].bytes == 4u << 20);
    CHECK_THAT(costs[1].verdict.remedy, Catch::Contains("-m devdax -M dev"));
}
