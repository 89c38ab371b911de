#include "collector/ledger.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "base/text_escape.h"
#include "collector/query.h"
#include "protocol/report_summary.h"
#include "protocol/verdicts.h"

namespace daxprobe::collector
{

using nlohmann::json;

namespace
{

constexpr std::uint64_t kMaxClaim = 1ULL << 53; // as for seq: a double holds it exactly

std::uint64_t satAdd(std::uint64_t a, std::uint64_t b)
{
    return a > std::numeric_limits<std::uint64_t>::max() - b
               ? std::numeric_limits<std::uint64_t>::max()
               : a + b;
}

std::optional<std::uint64_t> claim(std::optional<std::uint64_t> n)
{
    if (!n || *n > kMaxClaim)
        return std::nullopt;
    return n;
}

} // namespace

GuestMemory guestMemoryOf(const protocol::ReportSummary &report)
{
    GuestMemory g;
    if (auto n = claim(report.pageCacheBytes)) {
        g.pageCacheBytes = *n;
        g.reported = true;
    }
    std::set<std::string_view> daxDevices;
    for (const auto &m : report.mounts)
        if (!m.blockdev.empty() && protocol::daxInEffect(m.code))
            daxDevices.insert(m.blockdev);
    std::set<std::string_view> counted; // a repeated namespace counts once
    for (const auto &n : report.namespaces) {
        auto size = claim(n.size);
        if (size && daxDevices.count(n.blockdev) && counted.insert(n.blockdev).second)
            g.daxMountBytes = satAdd(g.daxMountBytes, *size);
    }
    return g;
}

Ledger buildLedger(std::vector<LedgerVm> vms)
{
    Ledger l;
    std::map<std::pair<std::uint64_t, std::uint64_t>, std::size_t> byKey; // (dev, ino) -> files
    for (const auto &vm : vms) {
        l.guestPageCacheBytes = satAdd(l.guestPageCacheBytes, vm.guest.pageCacheBytes);
        l.guestDaxMountBytes = satAdd(l.guestDaxMountBytes, vm.guest.daxMountBytes);
        l.qemuAnonBytes = satAdd(l.qemuAnonBytes, vm.qemuAnonBytes);
        for (const auto &f : vm.files) {
            if (!f.measured)
                continue;
            auto [it, fresh] = byKey.try_emplace({f.dev, f.ino}, l.files.size());
            if (fresh) {
                l.files.push_back({f, {}});
                l.filesCachedBytes = satAdd(l.filesCachedBytes, f.cachedBytes);
            }
            auto &host = l.files[it->second];
            host.file.mappedBytes = std::max(host.file.mappedBytes, f.mappedBytes);
            host.file.hugepageAdvised = host.file.hugepageAdvised || f.hugepageAdvised;
            auto &users = host.vms;
            if (std::find(users.begin(), users.end(), vm.vm) == users.end())
                users.push_back(vm.vm);
        }
    }
    for (auto &h : l.files)
        if (h.file.pmemBacking)
            h.readAround =
                judgeReadAround({h.file.path, h.file.cachedBytes, h.file.mappedBytes,
                                 h.file.hugepageAdvised, h.file.readAheadKb, h.file.readAheadPath});
    l.vms = std::move(vms);
    return l;
}

LedgerVm ledgerVmOf(std::string vm, const json &hostFacts, std::string_view reportText)
{
    LedgerVm out;
    out.vm = std::move(vm);
    if (!reportText.empty())
        out.guest = guestMemoryOf(protocol::summarizeReport(reportText));
    if (!hostFacts.is_object())
        return out;
    auto u64 = [](const json &j, const char *k) {
        auto it = j.find(k);
        return it != j.end() && it->is_number_unsigned() ? it->get<std::uint64_t>() : 0;
    };
    auto str = [](const json &j, const char *k) {
        auto it = j.find(k);
        return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    out.qemuKnown = true;
    out.qemuAnonBytes = u64(hostFacts, "anon_bytes");
    out.qemuPssBytes = u64(hostFacts, "pss_bytes");
    // What QEMU maps of each pmem backend's file, by path.
    std::map<std::string, std::pair<std::uint64_t, bool>> backends;
    if (auto it = hostFacts.find("nvdimm_backends"); it != hostFacts.end() && it->is_array())
        for (const auto &b : *it)
            if (b.is_object()) {
                auto &[mapped, huge] = backends[str(b, "mem_path")];
                mapped = satAdd(mapped, u64(b, "resident_bytes"));
                auto h = b.find("hugepage_advised");
                huge = huge || (h != b.end() && h->is_boolean() && h->get<bool>());
            }
    if (auto it = hostFacts.find("backing_files"); it != hostFacts.end() && it->is_array())
        for (const auto &f : *it) {
            if (!f.is_object())
                continue;
            LedgerFile lf;
            lf.path = str(f, "path");
            lf.role = str(f, "role");
            lf.dev = u64(f, "dev");
            lf.ino = u64(f, "ino");
            lf.sizeBytes = u64(f, "size_bytes");
            lf.cachedBytes = u64(f, "cached_bytes");
            lf.measured = !str(f, "method").empty();
            if (auto b = backends.find(lf.path); b != backends.end()) {
                lf.pmemBacking = true;
                lf.mappedBytes = b->second.first;
                lf.hugepageAdvised = b->second.second;
            }
            if (auto ra = f.find("read_ahead_kb"); ra != f.end() && ra->is_number_unsigned()) {
                lf.readAheadKb = ra->get<std::uint64_t>();
                lf.readAheadPath = str(f, "read_ahead_path");
            }
            out.files.push_back(std::move(lf));
        }
    return out;
}

namespace
{

std::string mib(std::uint64_t bytes)
{
    return fmt::format("{:.1f}", static_cast<double>(bytes) / (1 << 20));
}

} // namespace

std::string ledgerTable(const Ledger &l)
{
    std::string out = fmt::format("{:<24} {:>12} {:>12} {:>12} {:>12}\n", "VM (MiB)", "guest_cache",
                                  "guest_dax", "qemu_anon", "files_cached");
    for (const auto &vm : l.vms) {
        std::uint64_t files = 0;
        for (const auto &f : vm.files)
            files = satAdd(files, f.cachedBytes);
        out += fmt::format("{:<24} {:>12} {:>12} {:>12} {:>12}\n", printable(vm.vm),
                           vm.guest.reported ? mib(vm.guest.pageCacheBytes) : "-",
                           vm.guest.reported ? mib(vm.guest.daxMountBytes) : "-",
                           vm.qemuKnown ? mib(vm.qemuAnonBytes) : "-",
                           vm.qemuKnown ? mib(files) : "-");
    }
    out += fmt::format("{:<24} {:>12} {:>12} {:>12} {:>12}\n", "host (files once)",
                       mib(l.guestPageCacheBytes), mib(l.guestDaxMountBytes), mib(l.qemuAnonBytes),
                       mib(l.filesCachedBytes));
    out += fmt::format("host memory of the VMs: {} MiB (QEMU anonymous + backing files' page "
                       "cache; guest page cache is inside QEMU's anonymous memory)\n",
                       mib(l.hostBytes()));
    for (const auto &f : l.files) {
        out += fmt::format("file {} ({} MiB cached of {}): {} VM(s)\n", printable(f.file.path),
                           mib(f.file.cachedBytes), mib(f.file.sizeBytes), f.vms.size());
        if (f.file.pmemBacking)
            out += fmt::format("  pmem backing: QEMU maps {} MiB of it\n", mib(f.file.mappedBytes));
        if (f.readAround) {
            out += fmt::format("  read-around: {}\n", printable(f.readAround->cause));
            out += fmt::format("  fix:         {}\n", printable(f.readAround->remedy));
        }
    }
    return out;
}

std::string ledgerJson(const Ledger &l)
{
    json vms = json::array();
    for (const auto &vm : l.vms) {
        json files = json::array();
        for (const auto &f : vm.files)
            files.push_back({{"path", f.path},
                             {"role", f.role},
                             {"size_bytes", f.sizeBytes},
                             {"cached_bytes", f.cachedBytes},
                             {"measured", f.measured}});
        vms.push_back({{"vm", vm.vm},
                       {"guest_reported", vm.guest.reported},
                       {"guest_page_cache_bytes", vm.guest.pageCacheBytes},
                       {"guest_dax_mount_bytes", vm.guest.daxMountBytes},
                       {"qemu_known", vm.qemuKnown},
                       {"qemu_anon_bytes", vm.qemuAnonBytes},
                       {"qemu_pss_bytes", vm.qemuPssBytes},
                       {"backing_files", files}});
    }
    json files = json::array();
    for (const auto &f : l.files) {
        json readAround = nullptr;
        if (f.readAround)
            readAround = {{"extra_bytes", f.readAround->extraBytes},
                          {"cause", f.readAround->cause},
                          {"remedy", f.readAround->remedy}};
        files.push_back({{"path", f.file.path},
                         {"size_bytes", f.file.sizeBytes},
                         {"cached_bytes", f.file.cachedBytes},
                         {"pmem_backing", f.file.pmemBacking},
                         {"mapped_bytes", f.file.pmemBacking ? json(f.file.mappedBytes) : json()},
                         {"read_around", readAround},
                         {"vms", f.vms}});
    }
    json host = {{"guest_page_cache_bytes", l.guestPageCacheBytes},
                 {"guest_dax_mount_bytes", l.guestDaxMountBytes},
                 {"qemu_anon_bytes", l.qemuAnonBytes},
                 {"backing_files_cached_bytes", l.filesCachedBytes},
                 {"vm_memory_bytes", l.hostBytes()},
                 {"backing_files", files}};
    return json{{"vms", vms}, {"host", host}}.dump(-1, ' ', false, json::error_handler_t::replace) +
           "\n";
}

} // namespace daxprobe::collector
