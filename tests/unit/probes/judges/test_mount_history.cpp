// A kernel line describes the mount attempt that logged it, never a later
// mount of the same device (issue 8, part 1). The line texts are the ones
// Debian's 6.1 and 6.12 kernels logged in the test bed's guests
// (tests/fixtures/*/dev/kmsg).
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "probes/judges/verdict.h"
#include "probes/readers/mount_lines.h"

#include "tests/unit/probes/pmem_facts.h"

using namespace daxprobe;

namespace
{

std::vector<KmsgRecord> records(const std::vector<std::string> &lines)
{
    std::vector<KmsgRecord> out;
    std::uint64_t seq = 400;
    for (const auto &l : lines) {
        KmsgRecord r;
        REQUIRE(parseKmsgRecord(fmt::format("6,{},{},-;{}", seq, seq * 1000, l), r));
        ++seq;
        out.push_back(r);
    }
    return out;
}

Facts pmemFacts(const std::string &mode, bool queueDax, const std::string &fstype,
                const std::string &superOptions, bool statxDax)
{
    Facts f = test::pmemFacts(fstype, superOptions);
    f.topology.namespaces[0].mode = mode;
    f.topology.namespaces[0].align = 0;
    f.blockdevs[0].queueDax = queueDax;
    MountLiveFacts live;
    live.statx.observe();
    live.statx.file = "/mnt/pmem/(O_TMPFILE)";
    live.statx.dax = statxDax;
    live.mapSync.observe();
    live.mapSync.mapped = statxDax;
    f.mountLive["/mnt/pmem"] = live;
    return f;
}

bool evidenceHas(const Verdict &v, const std::string &check, const std::string &text)
{
    for (const auto &e : v.evidence)
        if (e.check == check && e.result.find(text) != std::string::npos)
            return true;
    return false;
}

} // namespace

TEST_CASE("kernel lines are classified by what they say about their mount", "[kmsg][history]")
{
    CHECK(classifyMountLine("EXT4-fs (pmem0): DAX unsupported by block device.") ==
          MountEvent::DaxRefused);
    CHECK(classifyMountLine("XFS (pmem0): DAX unsupported by block device. Turning off DAX.") ==
          MountEvent::DaxTurnedOff);
    CHECK(classifyMountLine("EXT4-fs (pmem0): mounted filesystem with ordered data mode. Quota "
                            "mode: none.") == MountEvent::Mounted);
    CHECK(classifyMountLine("EXT4-fs (pmem0): mounted filesystem 5d6c2d3e-0000 r/w with ordered "
                            "data mode. Quota mode: none.") == MountEvent::Mounted);
    CHECK(classifyMountLine("XFS (pmem0): Ending clean mount") == MountEvent::Mounted);
    CHECK(classifyMountLine("XFS (pmem0): Unmounting Filesystem") == MountEvent::Unmounted);
    CHECK(classifyMountLine("EXT4-fs (pmem0): unmounting filesystem 5d6c2d3e-0000.") ==
          MountEvent::Unmounted);
    CHECK(classifyMountLine("XFS (pmem0): Mounting V5 Filesystem") == MountEvent::None);
    CHECK(isMountLifecycle("EXT4-fs (vda1): mounted filesystem with ordered data mode."));
    CHECK_FALSE(isMountLifecycle("random: crng init done"));
}

TEST_CASE("a failed dax mount followed by a plain mount", "[verdict][history]")
{
    // ext4 -o dax on a raw namespace fails; the same filesystem is then mounted
    // without dax. The refusal is history: that mount failed.
    Facts f = pmemFacts("raw", false, "ext4", "rw", false);
    f.kmsg.records = records({
        "EXT4-fs (pmem0): DAX unsupported by block device.",
        "EXT4-fs (pmem0): mounted filesystem with ordered data mode. Quota mode: none.",
    });
    Report r = evaluate(f);
    REQUIRE(r.mounts.size() == 1);
    const MountReport &mr = r.mounts[0];
    CHECK(mr.verdict.code == code::DeviceCannotDax);
    CHECK_THAT(mr.verdict.summary, !Catch::Contains("mounted with dax"));
    REQUIRE(mr.kmsg.size() == 1);
    CHECK_THAT(mr.kmsg[0], Catch::Contains("mounted filesystem"));
    REQUIRE(mr.kmsgHistory.size() == 1);
    CHECK(mr.kmsgHistory[0].attempt == "failed");
    CHECK(evidenceHas(mr.verdict, "kmsg_history", "refused, that mount failed"));
    CHECK_FALSE(evidenceHas(mr.verdict, "kmsg", "DAX unsupported"));
}

TEST_CASE("an XFS silent-off mount, unmounted and remounted without dax", "[verdict][history]")
{
    Facts f = pmemFacts("raw", false, "xfs", "rw,attr2,inode64,logbufs=8,noquota", false);
    f.kmsg.records = records({
        "XFS (pmem0): DAX unsupported by block device. Turning off DAX.",
        "XFS (pmem0): Mounting V5 Filesystem",
        "XFS (pmem0): Ending clean mount",
        "XFS (pmem0): Unmounting Filesystem",
        "XFS (pmem0): Mounting V5 Filesystem",
        "XFS (pmem0): Ending clean mount",
    });
    Report r = evaluate(f);
    REQUIRE(r.mounts.size() == 1);
    CHECK(r.mounts[0].verdict.code == code::DeviceCannotDax);
    CHECK(r.mounts[0].kmsg.size() == 2);
    REQUIRE(r.mounts[0].kmsgHistory.size() == 1);
    CHECK(r.mounts[0].kmsgHistory[0].attempt == "unmounted");
    CHECK(evidenceHas(r.mounts[0].verdict, "kmsg_history", "Turning off DAX"));

    // The same log while the silent-off mount is still the one in place.
    f.mounts[0].superOptions = "rw,attr2,inode64,dax=never";
    f.kmsg.records.resize(3);
    r = evaluate(f);
    CHECK(r.mounts[0].verdict.code == code::DaxSilentlyOff);
    CHECK(evidenceHas(r.mounts[0].verdict, "kmsg", "Turning off DAX"));
    CHECK(r.mounts[0].kmsgHistory.empty());
}

TEST_CASE("a namespace reconfigured from raw to fsdax and remounted with dax", "[verdict][history]")
{
    Facts f = pmemFacts("fsdax", true, "xfs", "rw,attr2,dax=always,inode64", true);
    f.kmsg.records = records({
        "XFS (pmem0): DAX unsupported by block device. Turning off DAX.",
        "XFS (pmem0): Mounting V5 Filesystem",
        "XFS (pmem0): Ending clean mount",
        "XFS (pmem0): Unmounting Filesystem",
        "XFS (pmem0): DAX enabled. Warning: EXPERIMENTAL, use at your own risk",
        "XFS (pmem0): Mounting V5 Filesystem",
        "XFS (pmem0): Ending clean mount",
    });
    Report r = evaluate(f);
    REQUIRE(r.mounts.size() == 1);
    CHECK(r.mounts[0].verdict.code == code::DaxActive);
    CHECK(r.overall.code == code::DaxVerified);
    CHECK(r.mounts[0].kmsgHistory.size() == 1);

    // ext4 on 6.1 logs no unmount: a later mount still supersedes an earlier one.
    Facts e = pmemFacts("fsdax", true, "ext4", "rw,dax=always", true);
    e.kmsg.records = records({
        "EXT4-fs (pmem0): DAX unsupported by block device.",
        "EXT4-fs (pmem0): mounted filesystem with ordered data mode. Quota mode: none.",
        "EXT4-fs (pmem0): mounted filesystem with ordered data mode. Quota mode: none.",
    });
    r = evaluate(e);
    CHECK(r.mounts[0].verdict.code == code::DaxActive);
    CHECK(r.mounts[0].kmsg.size() == 1);
}

TEST_CASE("without a logged mount, an unfinished attempt's fallback line still counts",
          "[verdict][history]")
{
    // The log lost the mount lines (ring buffer): a "Turning off DAX" that no
    // later mount superseded may be the current mount's; a refusal never is.
    DeviceKmsg dk = attributeKmsg(records({"XFS (pmem0): DAX unsupported by block device. Turning "
                                           "off DAX."}),
                                  "pmem0");
    CHECK_FALSE(dk.attributed);
    CHECK(dk.current.size() == 1);
    dk = attributeKmsg(records({"EXT4-fs (pmem0): DAX unsupported by block device."}), "pmem0");
    CHECK(dk.current.empty());
    REQUIRE(dk.history.size() == 1);
    CHECK(dk.history[0].attempt == "failed");
    // Another device's lines are not this one's.
    dk = attributeKmsg(records({"XFS (pmem1): DAX unsupported by block device. Turning off DAX."}),
                       "pmem0");
    CHECK(dk.current.empty());
    CHECK(dk.history.empty());
}
