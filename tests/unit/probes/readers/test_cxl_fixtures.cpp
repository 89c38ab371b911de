// The CXL reader on the trees captured from the cxl guests (the shared boot
// on 6.1, 6.12, 7.2; cxl-no-memdev-6.12, cxl-no-commit-sid), held to `cxl
// list -vvv` run in the same guest (_vm/cxl-list.json).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "probes/readers/cxl_bus.h"

using namespace daxprobe;
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace
{

// cxl list's objects by kind ("memdev", "decoder", "region", "port",
// "endpoint"), whatever the nesting: an object whose kind key names it.
void collect(const json &j, std::map<std::string, std::map<std::string, json>> &out)
{
    if (j.is_object()) {
        for (const char *kind : {"memdev", "decoder", "region", "port", "endpoint"})
            if (j.contains(kind) && j[kind].is_string() &&
                (std::string(kind) != "region" || j.contains("decode_state")))
                out[kind][j[kind].get<std::string>()] = j;
        for (const auto &[k, v] : j.items())
            collect(v, out);
    } else if (j.is_array()) {
        for (const auto &v : j)
            collect(v, out);
    }
}

template <typename T> std::set<std::string> names(const std::vector<T> &v)
{
    std::set<std::string> out;
    for (const auto &x : v)
        out.insert(x.dev);
    return out;
}

std::set<std::string> keys(const std::map<std::string, json> &m)
{
    std::set<std::string> out;
    for (const auto &[k, v] : m)
        out.insert(k);
    return out;
}

} // namespace

TEST_CASE("the captured CXL trees read as cxl list saw them", "[cxl][reader][fixtures]")
{
    int seen = 0;
    for (const auto &e : fs::directory_iterator(FIXTURES_DIR)) {
        std::string name = e.path().filename().string();
        if (name != "cxl" && name.rfind("cxl-", 0) != 0)
            continue;
        INFO("fixture " << name);
        std::ifstream in(e.path() / "_vm" / "cxl-list.json");
        std::stringstream ss;
        ss << in.rdbuf();
        json ref = json::parse(ss.str(), nullptr, false);
        REQUIRE_FALSE(ref.is_discarded());
        std::map<std::string, std::map<std::string, json>> want;
        collect(ref, want);
        auto root = Root::open(e.path().string());
        REQUIRE(root);
        CxlBus bus = readCxlBus(*root);
        REQUIRE(bus.observed());
        ++seen;

        CHECK(names(bus.memdevs) == keys(want["memdev"]));
        for (const auto &m : bus.memdevs) {
            const json &w = want["memdev"][m.dev];
            CHECK(m.serial == w.value("serial", std::uint64_t{0}));
            CHECK(m.pmemSize == w.value("pmem_size", std::uint64_t{0}));
            CHECK(m.ramSize == w.value("ram_size", std::uint64_t{0}));
            std::string endpoint;
            for (const auto &[ep, o] : want["endpoint"])
                if (o.value("host", "") == m.dev)
                    endpoint = ep;
            CHECK(m.endpoint == endpoint);
        }
        CHECK(names(bus.decoders) == keys(want["decoder"]));
        for (const auto &d : bus.decoders) {
            const json &w = want["decoder"][d.dev];
            INFO(d.dev);
            CHECK(d.start == w.value("resource", std::uint64_t{0}));
            CHECK(d.size.value_or(0) == w.value("size", std::uint64_t{0}));
            CHECK(d.region == w.value("region", ""));
        }
        CHECK(names(bus.regions) == keys(want["region"]));
        for (const auto &r : bus.regions) {
            const json &w = want["region"][r.dev];
            CHECK(r.size == w.value("size", std::uint64_t{0}));
            // cxl list names the type only where the kernel has a region mode
            // (else: its first mapping's endpoint decoder's mode).
            std::string type = w.value("type", "");
            if (type.empty() && w.contains("mappings") && !w["mappings"].empty())
                type = want["decoder"][w["mappings"][0].value("decoder", "")].value("mode", "");
            CHECK(r.type == type);
            CHECK(r.interleaveWays == w.value("interleave_ways", 0u));
            CHECK((r.committed == true) == (w.value("decode_state", "") == "commit"));
        }
        for (const auto &p : bus.ports) {
            const auto &kind = p.kind == "endpoint" ? want["endpoint"] : want["port"];
            if (p.kind == "root" || !kind.count(p.dev))
                continue;
            INFO(p.dev);
            CHECK(p.dports.size() == kind.at(p.dev).value("nr_dports", 0u));
        }
    }
    CHECK(seen == 5); // the shared boot on 6.1, 6.12 and 7.2; the two refusal boots
}
