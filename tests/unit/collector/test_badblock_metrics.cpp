// The bad-block figures the collector exports from a guest's report: the
// namespace label only as the kernel shapes it, bounded in number.
#include <catch2/catch.hpp>

#include "collector/badblock_metrics.h"
#include "collector/metrics.h"
#include "collector/query.h"

using namespace daxprobe;
using namespace daxprobe::collector;

namespace
{

std::string rendered(const nlohmann::json &report)
{
    MetricsRegistry reg;
    reg.update("vm1", [&](VmMetrics &m) {
        MetricsRegistry::applyReport(m, protocol::summarizeReport(report.dump()), 1700000000);
    });
    return reg.render();
}

} // namespace

TEST_CASE("bad sectors per namespace and damaged files per VM", "[collector][metrics][badblocks]")
{
    nlohmann::json report{{"verdict", {{"code", "dax_verified"}}},
                          {"namespaces",
                           {{{"dev", "namespace0.0"}, {"badblock_count", 16}},
                            {{"dev", "namespace1.0"}, {"badblock_count", 0}},
                            {{"dev", "namespace0.0\"} 1\nfake{x=\""}, {"badblock_count", 5}},
                            {{"dev", "region0"}, {"badblock_count", 5}}}},
                          {"mounts",
                           {{{"badblocks", {{"files", {{{"path", "/a"}}, {{"path", "/b"}}}}}}},
                            {{"badblocks", {{"files", {{{"path", "/c"}}}}}}},
                            {{"badblocks", nullptr}}}}};
    std::string text = rendered(report);
    CHECK_THAT(
        text, Catch::Contains("daxprobe_vm_badblocks{vm=\"vm1\",namespace=\"namespace0.0\"} 16\n"));
    CHECK_THAT(text,
               Catch::Contains("daxprobe_vm_badblocks{vm=\"vm1\",namespace=\"namespace1.0\"} 0\n"));
    CHECK_THAT(text, !Catch::Contains("fake"));
    CHECK_THAT(text, !Catch::Contains("region0"));
    CHECK_THAT(text, Catch::Contains("daxprobe_vm_damaged_files{vm=\"vm1\"} 3\n"));
}

TEST_CASE("a guest cannot mint namespace labels without bound", "[collector][metrics][badblocks]")
{
    nlohmann::json nss = nlohmann::json::array();
    for (int i = 0; i < 1000; ++i)
        nss.push_back({{"dev", "namespace" + std::to_string(i) + ".0"}, {"badblock_count", 1}});
    VmBadblocks b =
        badblocksOf(protocol::summarizeReport(nlohmann::json{{"namespaces", nss}}.dump()));
    CHECK(b.byNamespace.size() == kMaxBadblockNamespaces);
}

TEST_CASE("query's history shows a report's bad sectors and damaged files",
          "[collector][query][badblocks]")
{
    StoredReport r;
    r.stream = "ab";
    r.verdict = "dax_verified";
    r.reportText = R"({"namespaces":[{"dev":"namespace0.0","badblock_count":8}],
                       "mounts":[{"badblocks":{"files":[{"path":"/mnt/pmem/f"}]}}]})";
    CHECK_THAT(historyTable("vm", {r}),
               Catch::Contains("dax_verified, 8 bad sectors, 1 damaged file\n"));
    r.reportText = R"({"namespaces":[{"dev":"namespace0.0","badblock_count":0}]})";
    CHECK_THAT(historyTable("vm", {r}), Catch::Contains("dax_verified\n"));
}
