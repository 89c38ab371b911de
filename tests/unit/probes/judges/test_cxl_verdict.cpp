#include <catch2/catch.hpp>

#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "probes/capture/live_facts.h"
#include "probes/judges/verdict.h"
#include "probes/readers/cxl_bus.h"
#include "probes/readers/root_facts.h"
#include "tests/unit/probes/cxl_tree.h"

using namespace daxprobe;

namespace
{

// Facts of a CXL guest: the tree's /sys/bus/cxl, a pmem-capable CEDT
// window, no NFIT, the given kernel.
Facts cxlFacts(const TempTree &tree, const std::string &kernel)
{
    auto root = Root::open(tree.dir.string());
    REQUIRE(root);
    Facts f;
    f.kernelRelease = kernel;
    f.cxl = readCxlBus(*root);
    f.cedt.present = f.cedt.exists = true;
    CedtWindow w;
    w.restrictions = kCedtType3 | kCedtPmem;
    w.interleaveWays = 1;
    w.targets = {12};
    f.cedt.windows.push_back(w);
    f.topology.observe();
    f.kmsg.observe();
    return f;
}

// cxl_pmem's nd region for region0 on the CXL bus, and a namespace on it.
void ndRegion(Facts &f, bool withNamespace)
{
    f.topology.buses.push_back({"ndbus0", "CXL", ""});
    NdRegion r;
    r.dev = "region0";
    r.bus = "ndbus0";
    r.type = "pmem";
    r.size = 256ULL << 20;
    f.topology.regions.push_back(r);
    if (withNamespace) {
        NdNamespace n;
        n.dev = "namespace0.0";
        n.region = "region0";
        n.mode = "fsdax";
        n.size = 250ULL << 20;
        n.blockdev = "pmem0";
        f.topology.namespaces.push_back(n);
    }
}

void kmsg(Facts &f, const std::string &line)
{
    KmsgRecord r;
    r.level = 3;
    r.message = line;
    f.kmsg.records.push_back(r);
}

const CxlRegionReport &onlyRegion(const Report &report)
{
    REQUIRE(report.cxl.regions.size() == 1);
    return report.cxl.regions[0];
}

} // namespace

TEST_CASE("the kernel versions that give a one-port bridge a passthrough decoder", "[cxl][verdict]")
{
    CHECK(passthroughForSingleDport("6.1.0-57-amd64"));
    CHECK(passthroughForSingleDport("6.2.16"));
    CHECK(passthroughForSingleDport("6.3.1"));
    CHECK_FALSE(passthroughForSingleDport("6.3.2"));
    CHECK_FALSE(passthroughForSingleDport("6.4.0"));
    CHECK_FALSE(passthroughForSingleDport("6.12.57+deb13-amd64"));
    CHECK_FALSE(passthroughForSingleDport("7.2.13+deb14-amd64"));
    CHECK_FALSE(passthroughForSingleDport(""));
    CHECK_FALSE(passthroughForSingleDport("garbage"));
}

TEST_CASE("a committed region through a one-port host bridge on 6.1 is a problem", "[cxl][verdict]")
{
    CxlTree tree;
    tree.region();
    Facts f = cxlFacts(tree, "6.1.0-57-amd64");
    ndRegion(f, true);
    Report report = evaluate(f);
    const CxlRegionReport &r = onlyRegion(report);
    CHECK(r.ndRegion == "region0");
    CHECK(r.verdict.code == "cxl_passthrough_uncommitted");
    CHECK(r.verdict.severity == Severity::Problem);
    CHECK_THAT(r.verdict.evidence.back().result, Catch::Contains("decoder1.0 of port1"));
    CHECK_THAT(r.verdict.remedy, Catch::Contains("-device cxl-rp"));
    CHECK(report.overall.code == "problems_found");
    CHECK(report.exitCode == 1);
    for (const auto &d : report.cxl.decoders)
        if (d.decoder->dev == "decoder1.0")
            CHECK(d.committed == false);
}

TEST_CASE("the same region is fine with two root ports, or on a newer kernel", "[cxl][verdict]")
{
    CxlTree tree;
    tree.region();
    std::string kernel = "6.12.57+deb13-amd64";
    SECTION("two root ports on 6.1")
    {
        tree.secondRootPort();
        kernel = "6.1.0-57-amd64";
    }
    SECTION("one root port on 6.12") {}
    Facts f = cxlFacts(tree, kernel);
    ndRegion(f, true);
    Report report = evaluate(f);
    CHECK(onlyRegion(report).verdict.code == "cxl_region_ok");
    CHECK(onlyRegion(report).verdict.severity == Severity::Ok);
    for (const auto &d : report.cxl.decoders)
        if (d.decoder->dev != "decoder0.0")
            CHECK(d.committed == true);
    CHECK(report.overall.code == "dax_verified");
}

TEST_CASE("decoders_committed (6.7+) decides a decoder's commit state", "[cxl][verdict]")
{
    CxlTree tree;
    tree.region();
    tree.write("sys/bus/cxl/devices/root0/port1/decoders_committed", "0\n");
    Facts f = cxlFacts(tree, "6.12.57+deb13-amd64");
    ndRegion(f, true);
    Report report = evaluate(f);
    CHECK(onlyRegion(report).verdict.code == "cxl_passthrough_uncommitted");
}

TEST_CASE("a region without its nd region says why", "[cxl][verdict]")
{
    CxlTree tree;
    tree.region();
    Facts f = cxlFacts(tree, "7.2.13+deb14-amd64");
    SECTION("the kernel's serial number refusal")
    {
        kmsg(f, "cxl_pmem_region pmem_region0: mem0: invalid or missing serial number");
        Report report = evaluate(f);
        const Verdict &v = onlyRegion(report).verdict;
        CHECK(v.code == "cxl_no_serial");
        CHECK(v.evidence.back().check == "kmsg");
        CHECK_THAT(v.remedy, Catch::Contains("-device cxl-type3,sn="));
        // CXL pmem, no namespace: never "no persistent memory"; the problem counts.
        CHECK(report.overall.code == "problems_found");
        CHECK(report.exitCode == 1);
    }
    SECTION("serial 0 in sysfs, the log unreadable")
    {
        tree.memdev("mem0", "0x0", "0x40000000");
        f = cxlFacts(tree, "7.2.13+deb14-amd64");
        CHECK(onlyRegion(evaluate(f)).verdict.code == "cxl_no_serial");
    }
    SECTION("no known cause")
    {
        Report report = evaluate(f);
        const Verdict &v = onlyRegion(report).verdict;
        CHECK(v.code == "cxl_region_no_nd_region");
        CHECK(v.severity == Severity::Problem);
    }
}

TEST_CASE("an nd region from CXL without a namespace is a warning with its remedy",
          "[cxl][verdict]")
{
    CxlTree tree;
    tree.region();
    Facts f = cxlFacts(tree, "6.12.57+deb13-amd64");
    ndRegion(f, false);
    Report report = evaluate(f);
    const Verdict &v = onlyRegion(report).verdict;
    CHECK(v.code == "cxl_region_no_namespace");
    CHECK(v.severity == Severity::Warning);
    CHECK(v.remedy == "ndctl create-namespace -m fsdax -r region0");
    CHECK(report.overall.code == "no_pmem_namespace");
}

TEST_CASE("pmem capacity without a region names the create-region command", "[cxl][verdict]")
{
    CxlTree tree;
    Facts f = cxlFacts(tree, "6.12.57+deb13-amd64");
    Report report = evaluate(f);
    REQUIRE(report.cxl.memdevs.size() == 1);
    REQUIRE(report.cxl.memdevs[0].verdict);
    const Verdict &v = *report.cxl.memdevs[0].verdict;
    CHECK(v.code == "cxl_no_region");
    CHECK(v.severity == Severity::Warning);
    CHECK(v.remedy == "cxl create-region -m -t pmem -d decoder0.0 -w 1 mem0 && cxl list -R");
    CHECK(report.overall.code == "no_pmem_namespace");
    CHECK(report.overall.remedy == v.remedy);

    SECTION("a memdev in a region has no verdict")
    {
        tree.region();
        Facts g = cxlFacts(tree, "6.12.57+deb13-amd64");
        ndRegion(g, true);
        CHECK_FALSE(evaluate(g).cxl.memdevs[0].verdict.has_value());
    }
}

TEST_CASE("no create-region command where a port on the path has no free decoder", "[cxl][verdict]")
{
    // mem1 beside mem0 on the same host bridge, whose one decoder region0
    // holds (QEMU 7.2 gives each port one): the kernel finds no decoder
    // for a second region there.
    CxlTree tree;
    tree.secondRootPort();
    tree.region();
    const std::string ep = std::string(CxlTree::kDevices) + "root0/port1/endpoint3/";
    tree.write(ep + "uport/uevent", "MAJOR=251\nMINOR=1\nDEVNAME=cxl/mem1\nDEVTYPE=cxl_memdev\n");
    tree.write(ep + "decoder3.0/mode", "none\n");
    tree.write(ep + "decoder3.0/interleave_ways", "1\n");
    tree.memdev("mem1", "0x3", "0x10000000");
    Facts f = cxlFacts(tree, "6.12.57+deb13-amd64");
    ndRegion(f, true);
    auto verdictOf = [](const Report &report) {
        for (const auto &m : report.cxl.memdevs)
            if (m.memdev->dev == "mem1" && m.verdict)
                return *m.verdict;
        FAIL("no verdict for mem1");
        return Verdict{};
    };
    Verdict v = verdictOf(evaluate(f));
    CHECK(v.code == "cxl_no_region");
    CHECK(v.remedy.empty());
    REQUIRE(v.warnings.size() == 1);
    CHECK(v.warnings[0].find("the 1 decoder(s) of port1 decode region0 already") !=
          std::string::npos);
    CHECK(v.evidence.back().result == "decoder1.0 of port1: region region0");

    SECTION("a second, free decoder in the host bridge: the command")
    {
        tree.write(std::string(CxlTree::kDevices) + "root0/port1/decoder1.1/interleave_ways",
                   "1\n");
        Facts g = cxlFacts(tree, "6.12.57+deb13-amd64");
        ndRegion(g, true);
        CHECK(verdictOf(evaluate(g)).remedy ==
              "cxl create-region -m -t pmem -d decoder0.0 -w 1 mem1 && cxl list -R");
    }
}

TEST_CASE("the kernel's CXL refusals are problems with their cause and remedy", "[cxl][verdict]")
{
    CxlTree tree;
    Facts f = cxlFacts(tree, "7.2.13+deb14-amd64");
    SECTION("no memdev: the event interrupt")
    {
        f.cxl.memdevs.clear();
        kmsg(f, "cxl_pci 0000:0d:00.0: Failed to get interrupt for event Info log");
        Report report = evaluate(f);
        REQUIRE(report.cxl.problems.size() == 1);
        const Verdict &v = report.cxl.problems[0];
        CHECK(v.code == "cxl_memdev_missing");
        CHECK_THAT(v.summary, Catch::Contains("0000:0d:00.0"));
        CHECK_THAT(v.remedy, Catch::Contains("pcie_ports=compat"));
        CHECK(report.overall.code == "problems_found");
    }
    SECTION("no memdev and no kernel line: the window alone")
    {
        f.cxl.memdevs.clear();
        Report report = evaluate(f);
        REQUIRE(report.cxl.problems.size() == 1);
        CHECK(report.cxl.problems[0].code == "cxl_memdev_missing");
        CHECK(report.cxl.problems[0].remedy.empty());
    }
    SECTION("a commit that failed and left no region")
    {
        kmsg(f, "cxl region0: Failed to synchronize CPU cache state");
        Report report = evaluate(f);
        REQUIRE(report.cxl.problems.size() == 1);
        CHECK(report.cxl.problems[0].code == "cxl_commit_failed");
        CHECK_THAT(report.cxl.problems[0].remedy, Catch::Contains("hypervisor=off"));
        REQUIRE(report.cxl.memdevs[0].verdict);
        CHECK(report.cxl.memdevs[0].verdict->warnings.size() == 1u);
    }
    SECTION("a region left uncommitted, with the kernel's line")
    {
        tree.region(false);
        f = cxlFacts(tree, "7.2.13+deb14-amd64");
        kmsg(f, "cxl region0: Failed to synchronize CPU cache state");
        Report report = evaluate(f);
        CHECK(report.cxl.problems.empty()); // the region carries it, once
        CHECK(onlyRegion(report).verdict.code == "cxl_commit_failed");
        CHECK(onlyRegion(report).verdict.evidence.back().check == "kmsg");
    }
}

TEST_CASE("a machine without CXL has no CXL section", "[cxl][verdict]")
{
    Facts f;
    f.topology.observe();
    Report report = evaluate(f);
    CHECK_FALSE(report.cxl.present);
    CHECK(report.overall.code == "no_nfit");
}

namespace
{

std::set<std::string> codesIn(const CxlReport &cxl)
{
    std::set<std::string> out;
    for (const Verdict *v : cxl.verdicts())
        out.insert(v->code);
    return out;
}

// A captured guest's facts, judged.
Report judgeFixture(const std::string &name)
{
    auto root = Root::open(std::string(FIXTURES_DIR) + "/" + name);
    REQUIRE(root);
    auto live = root->readFile("live.json", 16 << 20);
    REQUIRE(live);
    Facts f;
    liveFactsFromJson(nlohmann::json::parse(*live), f);
    readRootFacts(*root, f);
    return evaluate(f);
}

} // namespace

// The refusal boots, captured: cxl-no-memdev without pcie_ports=compat
// (6.12), cxl-no-commit with the hypervisor bit on (7.2).
TEST_CASE("the captured refusal boots: the kernel's line, its cause and workaround",
          "[cxl][verdict][fixtures]")
{
    struct Want {
        const char *code, *kernelWords, *remedyWords;
    };
    const std::map<std::string, Want> want = {
        {"cxl-no-memdev-6.12",
         {"cxl_memdev_missing", "Failed to get interrupt for event Info log", "pcie_ports=compat"}},
        {"cxl-no-commit-sid",
         {"cxl_commit_failed", "Failed to synchronize CPU cache state", "hypervisor=off"}}};
    for (const auto &[name, w] : want) {
        INFO("fixture " << name);
        Report report = judgeFixture(name);
        const Verdict *found = nullptr;
        for (const Verdict *v : report.cxl.verdicts())
            if (v->code == w.code)
                found = v;
        REQUIRE(found);
        CHECK(found->severity == Severity::Problem);
        bool cited = false;
        for (const auto &e : found->evidence)
            cited |= e.check == "kmsg" && e.result.find(w.kernelWords) != std::string::npos;
        CHECK(cited);
        CHECK(found->remedy.find(w.remedyWords) != std::string::npos);
        CHECK(report.overall.code == "problems_found");
    }
}

// The shared cxl boot, captured on each kernel (cxl-shared.md): mem0's good
// region, a memdev never given a region, and what the kernel made of the
// region behind the one-port host bridge of a memdev without a serial.
TEST_CASE("the captured cxl guests get their kernel's codes", "[cxl][verdict][fixtures]")
{
    const std::map<std::string, std::set<std::string>> want = {
        {"cxl", {"cxl_region_ok", "cxl_no_region", "cxl_passthrough_uncommitted"}},
        {"cxl-6.12", {"cxl_region_ok", "cxl_no_region", "cxl_region_no_namespace"}},
        {"cxl-sid", {"cxl_region_ok", "cxl_no_region", "cxl_no_serial"}}};
    for (const auto &[name, codes] : want) {
        INFO("fixture " << name);
        Report report = judgeFixture(name);
        CHECK(codesIn(report.cxl) == codes);
        // Serial 0x3 shares its host bridge's one decoder with region0: no
        // command; serial 0x4 has a bridge of its own (the guest ran this one).
        for (const auto &m : report.cxl.memdevs) {
            if (m.memdev->serial != 3u && m.memdev->serial != 4u)
                continue;
            REQUIRE(m.verdict);
            CHECK(m.verdict->code == "cxl_no_region");
            CHECK(m.verdict->remedy.empty() == (m.memdev->serial == 3u));
            CHECK(m.verdict->remedy.rfind("cxl create-region", 0) ==
                  (m.memdev->serial == 3u ? std::string::npos : 0));
        }
        CHECK(report.overall.code != "no_nfit");
        CHECK(report.overall.code == (name == "cxl-6.12" ? "dax_verified" : "problems_found"));
    }
}
