// Media errors of whole namespaces (issue 35), on the tree captured on the
// kernel's NVDIMM test bus after ARS found 8 injected sectors in an unmounted
// fsdax and in a devdax namespace (tests/fixtures/nfit-ars-nfit; ndctl list
// --media-errors said offset 64, length 8 for both).
#include <catch2/catch.hpp>

#include "probes/judges/media_errors.h"
#include "probes/readers/media_errors.h"
#include "probes/readers/sysfs_topology.h"

using namespace daxprobe;

namespace
{

Topology arsBus()
{
    auto root = Root::open(std::string(FIXTURES_DIR) + "/nfit-ars-nfit");
    REQUIRE(root);
    return readTopologyFromSysfs(*root);
}

const NdNamespace &byDev(const Topology &t, const std::string &dev)
{
    for (const auto &ns : t.namespaces)
        if (ns.dev == dev)
            return ns;
    FAIL("no namespace " << dev);
    throw;
}

} // namespace

TEST_CASE("media errors: a devdax namespace's from its region's list", "[media_errors]")
{
    Topology t = arsBus();
    // region1 lists "36928 8" and "69696 8" from its start (0x108000000);
    // /dev/dax1.2 begins at 0x10a200000 (its info block before that).
    const NdNamespace &dax = byDev(t, "namespace1.2");
    CHECK(dax.mode == "devdax");
    CHECK(dax.badRanges == std::vector<BadRange>{{64, 8}});
    CHECK(dax.badblockCount == 8);
    CHECK(mediaErrorBytes(dax) == std::vector<ByteRange>{{32768, 4096}});
    // The fsdax disk's own list is already relative to its data.
    const NdNamespace &fs = byDev(t, "namespace1.1");
    CHECK(fs.badRanges == std::vector<BadRange>{{64, 8}});
    CHECK(mediaErrorText(fs) == "bytes 32768-36863 of /dev/pmem1.1");
    // nfit-test's devdax namespace in the same region has none.
    CHECK(byDev(t, "namespace1.0").badRanges.empty());
}

TEST_CASE("media errors: clipped to the namespace's data", "[media_errors]")
{
    // data at byte 1 MiB of the region, 1 MiB long: sectors 2048..4095
    std::vector<BadRange> region{{2040, 16}, {3000, 8}, {4090, 100}, {9000, 1}};
    CHECK(rangesInNamespace(region, 1 << 20, 1 << 20) ==
          std::vector<BadRange>{{0, 8}, {952, 8}, {2042, 6}});
    CHECK(rangesInNamespace(region, 8 << 20, 1 << 20).empty());
}

TEST_CASE("media errors: ndctl clear-errors only where it can and should run", "[media_errors]")
{
    Topology t = arsBus();
    const NdNamespace &dax = byDev(t, "namespace1.2");
    const NdBus *bus = t.busOf(dax);
    REQUIRE(bus);
    Verdict v;
    judgeMediaErrors(dax, {false, bus}, v);
    CHECK(v.severity == Severity::Warning);
    CHECK(v.remedy.find("ndctl clear-errors namespace1.2   # ") == 0);
    REQUIRE(v.warnings.size() == 1);
    CHECK(v.warnings[0] == "8 bad sector(s) at bytes 32768-36863 of /dev/dax1.2: the data there "
                           "is lost, a load there raises a machine check (SIGBUS) where the "
                           "media is poisoned: device-DAX does not check the list");
    // kmem's: the bytes are RAM the page allocator hands out.
    Verdict ram;
    judgeMediaErrors(dax, {false, bus, true}, ram);
    CHECK(ram.warnings.at(0).find("the page allocator hands those bytes out as RAM") !=
          std::string::npos);
    // Mounted: the files come first (the mount's badblocks), no clear-errors.
    Verdict mounted;
    judgeMediaErrors(byDev(t, "namespace1.1"), {true, bus}, mounted);
    CHECK(mounted.remedy.empty());
    CHECK(mounted.warnings.at(0).find("the mount's bad blocks name the files") !=
          std::string::npos);
    // QEMU's NVDIMM: no clear_error in the bus's commands, nothing to run.
    NdBus qemu{"ndbus0", "ACPI.NFIT", "ars_cap ars_start ars_status cmd_call"};
    Verdict noClear;
    judgeMediaErrors(dax, {false, &qemu}, noClear);
    CHECK(noClear.remedy.empty());
    CHECK(noClear.warnings.at(0).find("ndbus0 cannot clear media errors") != std::string::npos);
    // Another remedy stays; clear-errors goes into the warning.
    Verdict other;
    other.remedy = "ndctl create-namespace ...";
    judgeMediaErrors(dax, {false, bus}, other);
    CHECK(other.remedy == "ndctl create-namespace ...");
    CHECK(other.warnings.at(0).find("to clear them: ndctl clear-errors namespace1.2") !=
          std::string::npos);
    // No errors, no change.
    Verdict none;
    judgeMediaErrors(byDev(t, "namespace1.0"), {false, bus}, none);
    CHECK((none.severity == Severity::Ok && none.warnings.empty() && none.evidence.empty()));
}
