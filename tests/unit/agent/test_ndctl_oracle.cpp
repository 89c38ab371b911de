// An independent oracle for the replayed topology: `ndctl list -BRN` and
// `daxctl list`, captured by the guest init right beside daxprobe's own
// capture (tests/fixtures/<scenario>/_vm/). The goldens are daxprobe's own
// output; these are not.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "agent/check/check_runner.h"
#include "probes/capture/topology_json.h"
#include "probes/readers/sysfs_topology.h"

using namespace daxprobe;
using nlohmann::json;
namespace fs = std::filesystem;

namespace
{

json readJsonFile(const fs::path &p)
{
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return json::parse(ss.str(), nullptr, false);
}

// "Not reported": absent, null, 0 or "" (ndctl omits what does not apply).
bool absent(const json &obj, const std::string &field)
{
    auto it = obj.find(field);
    return it == obj.end() || it->is_null() || (it->is_number() && *it == 0) ||
           (it->is_string() && it->get<std::string>().empty());
}

void compareFields(const json &ref, const json &got, const std::vector<std::string> &fields,
                   const std::string &what)
{
    for (const auto &field : fields) {
        INFO(what << " field " << field << ": ndctl/daxctl " << ref.value(field, json()).dump()
                  << ", daxprobe " << got.value(field, json()).dump());
        if (ref.contains(field))
            CHECK(got.value(field, json()) == ref[field]);
        else
            CHECK(absent(got, field));
    }
}

json byDev(const json &list, const char *key = "dev")
{
    json out = json::object();
    for (const auto &e : list)
        if (e.is_object() && e.contains(key))
            out[e[key].get<std::string>()] = e;
    return out;
}

// Compares a topology document (the check report, or Topology's JSON: the
// same "buses"/"regions"/"namespaces" keys) with `ndctl list -BRN` and
// `daxctl list` captured in the same guest; returns how many objects matched.
int compareWithGuestTools(const json &doc, const fs::path &dir)
{
    int compared = 0;
    fs::path ndctlFile = dir / "_vm" / "ndctl-list.json";
    // ndctl prints nothing at all when there is no bus; else one bus object or an array.
    std::ifstream probe(ndctlFile);
    bool empty = probe.peek() == std::ifstream::traits_type::eof();
    json listing = empty ? json::array() : readJsonFile(ndctlFile);
    REQUIRE_FALSE(listing.is_discarded());
    if (listing.is_object())
        listing = json::array({listing});
    json regions = json::array(), nss = json::array();
    std::set<std::string> buses;
    for (const auto &bus : listing) {
        buses.insert(bus.value("dev", ""));
        for (const auto &r : bus.value("regions", json::array())) {
            regions.push_back(r);
            for (auto n : r.value("namespaces", json::array())) {
                n["region"] = r["dev"];
                nss.push_back(n);
            }
        }
    }
    std::set<std::string> gotBuses;
    for (const auto &b : doc.value("buses", json::array()))
        gotBuses.insert(b.value("dev", ""));
    CHECK(gotBuses == buses);

    json gotRegions = byDev(doc.value("regions", json::array()));
    json gotNss = byDev(doc.value("namespaces", json::array()));
    CHECK(gotRegions.size() == regions.size());
    for (const auto &r : regions) {
        std::string dev = r["dev"];
        REQUIRE(gotRegions.contains(dev));
        compareFields(r, gotRegions[dev],
                      {"dev", "size", "align", "available_size", "type", "persistence_domain"},
                      "region " + dev);
        ++compared;
    }
    // A namespace of size 0 is the kernel's idle seed; ndctl hides it.
    std::size_t sized = 0;
    for (const auto &[dev, n] : gotNss.items())
        sized += n.value("size", 0ULL) > 0;
    CHECK(sized == nss.size());
    for (const auto &n : nss) {
        std::string dev = n["dev"];
        REQUIRE(gotNss.contains(dev));
        compareFields(
            n, gotNss[dev],
            {"dev", "mode", "size", "align", "map", "uuid", "blockdev", "chardev", "region"},
            "namespace " + dev);
        ++compared;
    }

    // daxctl's device-DAX view of the same namespaces.
    fs::path daxctlFile = dir / "_vm" / "daxctl-list.json";
    std::ifstream dprobe(daxctlFile);
    if (fs::exists(daxctlFile) && dprobe.peek() != std::ifstream::traits_type::eof()) {
        json devs = readJsonFile(daxctlFile);
        REQUIRE(devs.is_array());
        json byChardev = byDev(doc.value("dax_devices", json::array()), "chardev");
        CHECK(byChardev.size() == devs.size());
        for (const auto &d : devs) {
            std::string cd = d["chardev"];
            REQUIRE(byChardev.contains(cd));
            compareFields(d, byChardev[cd],
                          {"chardev", "size", "align", "target_node", "mode", "state",
                           "online_memblocks", "total_memblocks", "movable"},
                          "dax device " + cd);
            ++compared;
        }
    }
    return compared;
}

} // namespace

TEST_CASE("replayed topology matches ndctl and daxctl from the same guest", "[fixtures][oracle]")
{
    int compared = 0;
    for (const auto &e : fs::directory_iterator(FIXTURES_DIR)) {
        fs::path dir = e.path();
        if (!fs::exists(dir / "live.json") || !fs::exists(dir / "_vm" / "ndctl-list.json"))
            continue;
        INFO("scenario " << dir.filename().string());
        CheckOptions options;
        options.replayDir = dir.string();
        options.json = true;
        compared += compareWithGuestTools(runCheck(options).report, dir);
    }
    CHECK(compared >= 10); // every scenario with NVDIMM compared at least a region and a namespace
}

// The sysfs reader that replaced libndctl/libdaxctl, on the sysfs trees the
// guests' captures recorded (sys/bus/nd/...), against ndctl and daxctl run in
// the same guest: an independent source, not daxprobe's own goldens.
TEST_CASE("sysfs topology matches ndctl and daxctl from the same guest",
          "[fixtures][oracle][sysfs]")
{
    int compared = 0, trees = 0;
    for (const auto &e : fs::directory_iterator(FIXTURES_DIR)) {
        fs::path dir = e.path();
        // Captures from before the sysfs reader hold no nd tree (libndctl
        // read it behind the Root's back); a guest without a bus has none.
        if (!fs::exists(dir / "_vm" / "ndctl-list.json") || !fs::exists(dir / "sys") ||
            (!fs::exists(dir / "sys" / "bus" / "nd") &&
             fs::file_size(dir / "_vm" / "ndctl-list.json") > 0))
            continue;
        INFO("scenario " << dir.filename().string());
        auto root = Root::open(dir.string());
        REQUIRE(root);
        Topology topo = readTopologyFromSysfs(*root);
        CHECK(topo.observed());
        CHECK(topo.text.empty());
        trees += fs::exists(dir / "sys" / "bus" / "nd");
        compared += compareWithGuestTools(json(topo), dir);
    }
    CHECK(trees >= 8);     // the recaptured scenarios hold their nd sysfs tree
    CHECK(compared >= 20); // regions, namespaces and dax devices of those
}
