// The README's metrics table is what operators write alerts and dashboards
// against: it must name exactly the families, types and labels /metrics
// serves. This renders the real exposition with every family populated and
// compares it with the table in README.md.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "collector/metrics.h"

using namespace daxprobe::collector;

namespace
{

struct Family {
    std::string type;
    std::set<std::string> labels;
};

std::string fmtFamily(const Family &f)
{
    std::string s = f.type + " {";
    for (const auto &l : f.labels)
        s += l + ",";
    return s + "}";
}

// "# TYPE name type" lines give the type; sample lines give the label names.
std::map<std::string, Family> parseExposition(const std::string &text)
{
    std::map<std::string, Family> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("# TYPE ", 0) == 0) {
            std::istringstream t(line.substr(7));
            std::string name, type;
            t >> name >> type;
            out[name].type = type;
            continue;
        }
        if (line.empty() || line[0] == '#')
            continue;
        auto brace = line.find('{');
        auto space = line.find(' ');
        std::string name = line.substr(0, std::min(brace, space));
        auto &fam = out[name];
        if (brace == std::string::npos || brace > space)
            continue;
        // key="value",... with \" and \\ escaped inside values.
        for (std::size_t i = brace + 1; i < line.size() && line[i] != '}';) {
            auto eq = line.find('=', i);
            fam.labels.insert(line.substr(i, eq - i));
            std::size_t j = eq + 2;
            while (j < line.size() && line[j] != '"')
                j += line[j] == '\\' ? 2 : 1;
            i = j + 1;
            if (i < line.size() && line[i] == ',')
                ++i;
        }
    }
    return out;
}

std::vector<std::string> backticked(const std::string &cell)
{
    std::vector<std::string> out;
    for (auto a = cell.find('`'); a != std::string::npos; a = cell.find('`', a + 1)) {
        auto b = cell.find('`', a + 1);
        if (b == std::string::npos)
            break;
        out.push_back(cell.substr(a + 1, b - a - 1));
        a = b;
    }
    return out;
}

// Rows "| `name` | type | `l1`, `l2` | meaning |" of README's "### Metrics".
std::map<std::string, Family> parseReadme(const std::string &path)
{
    std::ifstream f(path);
    REQUIRE(f);
    std::map<std::string, Family> out;
    std::string line;
    bool inSection = false;
    while (std::getline(f, line)) {
        if (line.rfind("#", 0) == 0) {
            inSection = line == "### Metrics";
            continue;
        }
        if (!inSection || line.rfind("| `", 0) != 0)
            continue;
        std::vector<std::string> cells;
        std::istringstream row(line.substr(1));
        std::string cell;
        while (std::getline(row, cell, '|'))
            cells.push_back(cell);
        REQUIRE(cells.size() >= 3);
        auto names = backticked(cells[0]);
        REQUIRE(names.size() == 1);
        Family fam;
        std::istringstream(cells[1]) >> fam.type;
        for (auto &l : backticked(cells[2]))
            fam.labels.insert(l);
        out[names[0]] = fam;
    }
    return out;
}

} // namespace

TEST_CASE("README's metrics table matches the exposition", "[collector][metrics][readme]")
{
    MetricsRegistry reg;
    reg.setHttpConnections(1, 8);
    reg.noteStoreError("vm1");
    reg.update("vm1", [](VmMetrics &m) {
        m.connected = true;
        m.disconnects["eof"] = 1;
        daxprobe::protocol::ReportSummary report;
        report.code = "dax_verified";
        report.mounts = {{"/mnt/pmem", "dax_active", "pmem0", 1}};
        report.namespaces = {{"namespace0.0", "pmem0", 1 << 30, "dax_capable", 8}};
        report.dimms = {{"nmem0", 42, "dimm_ok", "ok", 42}};
        MetricsRegistry::applyReport(m, report, 1700000000);
        QemuFacts q;
        q.pid = 1;
        NvdimmBackend b;
        b.id = "mem1";
        b.memPath = "/var/lib/nvdimm.img";
        b.persistence = "page_cache";
        b.residentBytes = 4096; // 8 MiB cached for 4 KiB mapped: read-around
        q.backends.push_back(b);
        q.files.push_back({b.memPath, "nvdimm", "", 8, 1, 8 << 20, 8 << 20, "cachestat", ""});
        m.qemu = q;
        m.guest.reported = true;
    });
    auto served = parseExposition(reg.render());
    auto documented = parseReadme(README_PATH);
    REQUIRE(!documented.empty());

    for (const auto &[name, fam] : served) {
        INFO("served by /metrics: " << name << " " << fmtFamily(fam));
        REQUIRE(documented.count(name));
        CHECK(fmtFamily(documented[name]) == fmtFamily(fam));
    }
    for (const auto &[name, fam] : documented) {
        INFO("in README.md but not served: " << name);
        CHECK(served.count(name));
    }
}
