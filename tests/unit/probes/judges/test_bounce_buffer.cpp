// The bounce-buffer cost: lines captured from real guests' boot logs
// (Debian 6.1 under QEMU 7.2, -m 512M,slots=2,maxmem=4G with an NVDIMM).
#include <catch2/catch.hpp>

#include "probes/judges/bounce_buffer.h"
#include "probes/judges/verdict.h"
#include "probes/readers/kmsg.h"

using namespace daxprobe;

namespace
{

BounceBufferFacts factsOf(std::initializer_list<const char *> lines)
{
    BounceBufferFacts f;
    for (const char *line : lines) {
        KmsgRecord r;
        REQUIRE(parseKmsgRecord(line, r));
        noteBootMemory(f, r.message);
    }
    return f;
}

// As captured in tests/fixtures/fsdax-ext4/dev/kmsg.
const char *kCmdline = "6,1,0,-;Command line: console=ttyS0 panic=-1 quiet";
const char *kRam = "6,5,0,-;BIOS-e820: [mem 0x0000000000100000-0x000000001ffdefff] usable";
const char *kReserved = "6,8,0,-;BIOS-e820: [mem 0x000000fd00000000-0x000000ffffffffff] reserved";
const char *kHotplug = "6,45,0,-;ACPI: SRAT: Node 0 PXM 0 [mem 0x100000000-0x25fffffff] hotplug";
const char *kMapped =
    "6,307,4638484,-;software IO TLB: mapped [mem 0x0000000019c00000-0x000000001dc00000] (64MB)";

} // namespace

TEST_CASE("a bounce buffer set up only for the hotplug range", "[verdict][bounce]")
{
    auto f = factsOf({kCmdline, kRam, kReserved, kHotplug, kMapped});
    CHECK(f.bytes == 64ULL << 20);
    auto v = judgeBounceBuffer(f);
    REQUIRE(v);
    CHECK(v->code == code::BounceBufferForHotplug);
    CHECK(v->severity == Severity::Warning);
    CHECK(v->summary.find("64 MiB") != std::string::npos);
    CHECK(v->remedy.find("swiotlb=noforce") != std::string::npos);
    REQUIRE(v->evidence.size() == 3);
    CHECK(v->evidence[0].result.find("(64MB)") != std::string::npos);
    CHECK(v->evidence[1].result.find("hotplug") != std::string::npos);
}

TEST_CASE("a bounce buffer with a reason of its own is no verdict", "[verdict][bounce]")
{
    // RAM above 4 GiB: a 32-bit DMA device may need the buffer.
    CHECK_FALSE(
        judgeBounceBuffer(factsOf({kCmdline, kRam,
                                   "6,9,0,-;BIOS-e820: [mem 0x0000000100000000-0x000000013fffffff] "
                                   "usable",
                                   kHotplug, kMapped})));
    // Asked for on the command line (swiotlb=force, a confidential guest).
    CHECK_FALSE(judgeBounceBuffer(
        factsOf({"6,1,0,-;Command line: console=ttyS0 swiotlb=force", kRam, kHotplug, kMapped})));
    CHECK_FALSE(judgeBounceBuffer(
        factsOf({"6,1,0,-;Command line: mem_encrypt=on", kRam, kHotplug, kMapped})));
    // No buffer (swiotlb=noforce), or no hotplug range above 4 GiB.
    CHECK_FALSE(judgeBounceBuffer(factsOf({kCmdline, kRam, kHotplug})));
    CHECK_FALSE(judgeBounceBuffer(factsOf({kCmdline, kRam, kMapped})));
}

TEST_CASE("the boot log of real guests, read whole", "[verdict][bounce]")
{
    auto nvdimm = Root::open(FIXTURES_DIR "/fsdax-ext4");
    REQUIRE(nvdimm);
    auto v = judgeBounceBuffer(readKmsg(*nvdimm).bootMemory);
    REQUIRE(v);
    CHECK(v->summary.find("64 MiB") != std::string::npos);

    auto plain = Root::open(FIXTURES_DIR "/no-nvdimm");
    REQUIRE(plain);
    CHECK_FALSE(judgeBounceBuffer(readKmsg(*plain).bootMemory));
}
