#include "collector/host_facts.h"

#include <cstdlib>
#include <map>
#include <sstream>

#include <fmt/format.h>

namespace daxprobe::collector
{

using nlohmann::json;

namespace
{

// QEMU's key=value option syntax, with ",," standing for a literal comma.
std::map<std::string, std::string> splitQemuOpts(std::string_view s)
{
    std::map<std::string, std::string> out;
    std::string cur;
    std::vector<std::string> parts;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == ',') {
            if (i + 1 < s.size() && s[i + 1] == ',') {
                cur.push_back(',');
                ++i;
                continue;
            }
            parts.push_back(std::move(cur));
            cur.clear();
            continue;
        }
        cur.push_back(s[i]);
    }
    parts.push_back(std::move(cur));
    for (std::size_t i = 0; i < parts.size(); ++i) {
        auto eq = parts[i].find('=');
        if (eq == std::string::npos)
            out[i == 0 ? "" : parts[i]] = i == 0 ? parts[i] : "on"; // first bare word: the type
        else
            out[parts[i].substr(0, eq)] = parts[i].substr(eq + 1);
    }
    return out;
}

bool truthy(const std::string &v)
{
    return v == "on" || v == "true" || v == "yes" || v == "1";
}

std::map<std::string, std::string> optsOf(const std::string &arg, const char *typeKey)
{
    if (!arg.empty() && arg.front() == '{') {
        std::map<std::string, std::string> out;
        json j = json::parse(arg, nullptr, false);
        if (!j.is_object())
            return out;
        for (auto &[k, v] : j.items()) {
            if (v.is_string())
                out[k] = v.get<std::string>();
            else if (v.is_boolean())
                out[k] = v.get<bool>() ? "on" : "off";
            else if (v.is_number())
                out[k] = v.dump();
        }
        out[""] = out[typeKey];
        return out;
    }
    return splitQemuOpts(arg);
}

// A -device's link to a memory backend: the backend id, the role its file
// plays, and whether it is the device's persistent memory.
struct MemdevLink {
    std::string memdev, role;
    bool persistent = false;
};

// The memory backends a -device uses. cxl-type3 names its persistent memory
// memdev= (QEMU 7.2) or persistent-memdev= (8.0 on), its RAM volatile-memdev=
// and its label storage area lsa=; any other device's memdev= is memory.
std::vector<MemdevLink> memdevLinks(std::map<std::string, std::string> d)
{
    const std::string &driver = d[""];
    std::vector<MemdevLink> out;
    auto link = [&](const char *key, std::string role, bool persistent) {
        if (!d[key].empty())
            out.push_back({d[key], std::move(role), persistent});
    };
    if (driver == "cxl-type3") {
        link("memdev", driver, true);
        link("persistent-memdev", driver, true);
        link("volatile-memdev", "cxl-type3-volatile", false);
        link("lsa", "cxl-lsa", false);
    } else {
        link("memdev", driver, driver == "nvdimm" || driver == "virtio-pmem-pci");
    }
    return out;
}

} // namespace

unsigned long long smapsField(std::string_view text, std::string_view key)
{
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t end = text.find('\n', pos);
        if (end == std::string_view::npos)
            end = text.size();
        std::string_view line = text.substr(pos, end - pos);
        if (line.size() > key.size() && line.substr(0, key.size()) == key &&
            line[key.size()] == ':')
            return std::strtoull(std::string(line.substr(key.size() + 1)).c_str(), nullptr, 10) *
                   1024;
        pos = end + 1;
    }
    return 0;
}

std::vector<NvdimmBackend> parseNvdimmBackends(const std::vector<std::string> &argv)
{
    std::map<std::string, NvdimmBackend> files;
    std::vector<std::pair<std::string, std::string>> memdevs; // device, memdev
    for (std::size_t i = 0; i + 1 < argv.size(); ++i) {
        if (argv[i] == "-object") {
            auto o = optsOf(argv[i + 1], "qom-type");
            if (o[""] != "memory-backend-file")
                continue;
            NvdimmBackend b;
            b.id = o["id"];
            b.memPath = o["mem-path"];
            b.share = truthy(o["share"]);
            b.pmem = truthy(o["pmem"]);
            files[b.id] = b;
        } else if (argv[i] == "-device") {
            for (auto &l : memdevLinks(optsOf(argv[i + 1], "driver")))
                if (l.persistent)
                    memdevs.emplace_back(std::move(l.role), std::move(l.memdev));
        }
    }
    std::vector<NvdimmBackend> out;
    for (const auto &[device, id] : memdevs)
        if (auto it = files.find(id); it != files.end()) {
            out.push_back(it->second);
            out.back().device = device;
        }
    return out;
}

std::vector<BackingFile> parseBackingFiles(const std::vector<std::string> &argv)
{
    std::vector<BackingFile> out;
    std::map<std::string, std::string> roleOfMemdev; // memdev id -> the device using it
    for (std::size_t i = 0; i + 1 < argv.size(); ++i)
        if (argv[i] == "-device")
            for (auto &l : memdevLinks(optsOf(argv[i + 1], "driver")))
                roleOfMemdev[l.memdev] = std::move(l.role);
    auto add = [&](const std::string &path, std::string role, std::string format = {}) {
        if (path.empty() || path.front() != '/')
            return; // a protocol (nbd:, http:) or a path relative to QEMU's cwd
        for (const auto &f : out)
            if (f.path == path)
                return;
        BackingFile f;
        f.path = path;
        f.role = std::move(role);
        f.format = std::move(format);
        out.push_back(std::move(f));
    };
    for (std::size_t i = 0; i + 1 < argv.size(); ++i) {
        const std::string &opt = argv[i];
        if (opt == "-object") {
            auto o = optsOf(argv[i + 1], "qom-type");
            if (o[""] != "memory-backend-file")
                continue;
            auto role = roleOfMemdev.find(o["id"]);
            add(o["mem-path"], role == roleOfMemdev.end() ? "memory" : role->second);
        } else if (opt == "-drive") {
            auto d = optsOf(argv[i + 1], "driver");
            add(d["file"], "drive", d["format"]);
        } else if (opt == "-blockdev") {
            auto b = optsOf(argv[i + 1], "driver");
            if (b[""] == "file")
                add(b["filename"], "drive");
        }
    }
    return out;
}

namespace
{

// Longest mount point that prefixes path, from a mountinfo text.
void classifyMount(std::string_view mountinfo, NvdimmBackend &b)
{
    std::size_t best = 0;
    std::istringstream in{std::string(mountinfo)};
    std::string line;
    while (std::getline(in, line)) {
        // id parent major:minor root mountpoint options [optional...] - fstype source superopts
        std::istringstream f(line);
        std::string id, parent, dev, root, mp, opts, tok;
        f >> id >> parent >> dev >> root >> mp >> opts;
        while (f >> tok && tok != "-") {
        }
        std::string fstype, source, superOpts;
        f >> fstype >> source >> superOpts;
        bool prefix = b.memPath.compare(0, mp.size(), mp) == 0 &&
                      (mp == "/" || b.memPath.size() == mp.size() || b.memPath[mp.size()] == '/');
        if (!prefix || mp.size() < best)
            continue;
        best = mp.size();
        b.hostFsType = fstype;
        std::string all = "," + opts + "," + superOpts + ",";
        b.onHostDaxFs =
            all.find(",dax,") != std::string::npos || all.find(",dax=always,") != std::string::npos;
    }
}

} // namespace

QemuFacts readQemuFacts(const Root &root, int pid)
{
    QemuFacts f;
    f.pid = pid;
    std::string dir = fmt::format("/proc/{}", pid);

    auto cmdline = root.readFile(dir + "/cmdline", 1 << 20);
    if (!cmdline) {
        f.errors.push_back(cmdline.error().describe());
        return f;
    }
    std::vector<std::string> argv;
    std::string cur;
    for (char c : *cmdline) {
        if (c == '\0') {
            argv.push_back(std::move(cur));
            cur.clear();
        } else {
            cur.push_back(c);
        }
    }
    if (!cur.empty())
        argv.push_back(cur);
    f.backends = parseNvdimmBackends(argv);

    f.files = parseBackingFiles(argv);

    if (auto rollup = root.readFile(dir + "/smaps_rollup"); rollup) {
        f.rssBytes = smapsField(*rollup, "Rss");
        f.pssBytes = smapsField(*rollup, "Pss");
        f.anonBytes = smapsField(*rollup, "Anonymous");
    } else {
        f.errors.push_back(rollup.error().describe());
    }

    if (f.backends.empty())
        return f; // no NVDIMM: the full smaps (ms of CPU for a big guest) has nothing for us
    auto smaps = root.readFile(dir + "/smaps", 64 << 20);
    if (!smaps)
        f.errors.push_back(smaps.error().describe());
    auto mountinfo = root.readFile(dir + "/mountinfo");

    for (auto &b : f.backends) {
        b.onDevDax = b.memPath.rfind("/dev/dax", 0) == 0;
        if (mountinfo && !b.onDevDax)
            classifyMount(*mountinfo, b);
        if (smaps) {
            // A mapping header ends with the path; its fields follow until the next header.
            std::istringstream in(*smaps);
            std::string line;
            bool inside = false;
            while (std::getline(in, line)) {
                bool header = !line.empty() && line.find(':') != std::string::npos &&
                              line.find('-') < line.find(' ') &&
                              std::isxdigit(static_cast<unsigned char>(line[0]));
                if (header) {
                    auto slash = line.find('/');
                    std::string path = slash == std::string::npos ? "" : line.substr(slash);
                    inside = path == b.memPath;
                    b.mapped = b.mapped || inside;
                } else if (inside && line.rfind("Rss:", 0) == 0) {
                    b.residentBytes += smapsField(line, "Rss");
                } else if (inside && line.rfind("VmFlags:", 0) == 0) {
                    b.hugepageAdvised =
                        b.hugepageAdvised || (line + " ").find(" hg ") != std::string::npos;
                }
            }
        }
        if (!b.share)
            b.persistence = "none";
        else if (b.pmem || b.onDevDax || b.onHostDaxFs)
            b.persistence = "pmem";
        else
            b.persistence = "page_cache";
    }
    return f;
}

json toJson(const QemuFacts &f)
{
    json backends = json::array();
    for (const auto &b : f.backends)
        backends.push_back({{"id", b.id},
                            {"device", b.device},
                            {"mem_path", b.memPath},
                            {"share", b.share},
                            {"pmem", b.pmem},
                            {"on_devdax", b.onDevDax},
                            {"on_host_dax_fs", b.onHostDaxFs},
                            {"host_fstype", b.hostFsType},
                            {"mapped", b.mapped},
                            {"resident_bytes", b.residentBytes},
                            {"hugepage_advised", b.hugepageAdvised},
                            {"persistence", b.persistence}});
    json files = json::array();
    for (const auto &b : f.files)
        files.push_back({{"path", b.path},
                         {"role", b.role},
                         {"dev", b.dev},
                         {"ino", b.ino},
                         {"size_bytes", b.sizeBytes},
                         {"cached_bytes", b.cachedBytes},
                         {"read_ahead_kb", b.readAheadKb ? json(*b.readAheadKb) : json(nullptr)},
                         {"read_ahead_path", b.readAheadPath},
                         {"method", b.method},
                         {"error", b.error}});
    return {{"pid", f.pid},
            {"rss_bytes", f.rssBytes},
            {"pss_bytes", f.pssBytes},
            {"anon_bytes", f.anonBytes},
            {"nvdimm_backends", backends},
            {"backing_files", files},
            {"errors", f.errors}};
}

} // namespace daxprobe::collector
