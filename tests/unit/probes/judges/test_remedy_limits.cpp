// Remedies ndctl would refuse are not offered (issue 36, part 3): the
// nfit_test bus's 4 MiB region (tests/fixtures/nfit-test-nfit) and the
// alignment hint of a device-DAX namespace.
#include <catch2/catch.hpp>

#include "probes/judges/remedies.h"
#include "probes/judges/verdict.h"
#include "probes/readers/sysfs_topology.h"

using namespace daxprobe;

TEST_CASE("remedies: no reconfiguration below ndctl's 16 MiB", "[remedy]")
{
    auto root = Root::open(std::string(FIXTURES_DIR) + "/nfit-test-nfit");
    REQUIRE(root);
    Topology t = readTopologyFromSysfs(*root);
    const NdNamespace *small = nullptr;
    for (const auto &n : t.namespaces)
        if (n.dev == "namespace3.0")
            small = &n;
    REQUIRE(small);
    REQUIRE(small->size == 4u << 20); // the test bus's small region, raw
    Verdict v = judgeNamespace(*small);
    CHECK(v.code == code::DeviceCannotDax);
    CHECK(v.remedy.empty()); // ndctl: "'--size=' must be >= 16MiB for 'fsdax' mode"
    REQUIRE(v.warnings.size() == 1);
    CHECK(v.warnings[0].find("at least 16 MiB") != std::string::npos);

    NdNamespace big = *small;
    big.size = kMinNamespaceSize;
    CHECK(judgeNamespace(big).remedy.find("ndctl create-namespace -f -e namespace3.0 -m fsdax") ==
          0);
}

TEST_CASE("remedies: the alignment hint keeps device-DAX device-DAX", "[remedy]")
{
    NdNamespace ns;
    ns.dev = "namespace1.0";
    ns.mode = "devdax";
    ns.size = 16u << 20;
    ns.align = 4096;
    Verdict v = judgeNamespace(ns);
    REQUIRE(v.warnings.size() == 1);
    CHECK(v.warnings[0].find("(ndctl create-namespace -f -e namespace1.0 -m devdax --align 2M)") !=
          std::string::npos);
    ns.mode = "fsdax";
    CHECK(judgeNamespace(ns).warnings[0].find("-m fsdax --align 2M)") != std::string::npos);
}
