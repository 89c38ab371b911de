#include "collector/ledger_metrics.h"

#include <fmt/format.h>

namespace daxprobe::collector
{

LedgerVm ledgerVmOf(const std::string &vm, const VmMetrics &m)
{
    LedgerVm out;
    out.vm = vm;
    out.guest = m.guest;
    if (!m.qemu)
        return out;
    out.qemuKnown = true;
    out.qemuAnonBytes = m.qemu->anonBytes;
    out.qemuPssBytes = m.qemu->pssBytes;
    for (const auto &f : m.qemu->files) {
        LedgerFile lf{f.path, f.role, f.dev, f.ino, f.sizeBytes, f.cachedBytes, !f.method.empty()};
        // As ledger.cpp's ledgerVmOf reads the same facts from the store's JSON.
        for (const auto &b : m.qemu->backends)
            if (b.memPath == f.path) {
                lf.pmemBacking = true;
                lf.mappedBytes += b.residentBytes;
                lf.hugepageAdvised = lf.hugepageAdvised || b.hugepageAdvised;
            }
        lf.readAheadKb = f.readAheadKb;
        lf.readAheadPath = f.readAheadPath;
        out.files.push_back(std::move(lf));
    }
    return out;
}

void appendLedgerMetrics(std::string &out, const std::map<std::string, VmMetrics> &vms)
{
    auto family = [&](const char *name, const char *help) {
        out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", name, help, name);
    };
    std::vector<LedgerVm> rows;
    rows.reserve(vms.size());
    for (const auto &[vm, m] : vms)
        rows.push_back(ledgerVmOf(vm, m));
    Ledger l = buildLedger(std::move(rows));

    family("daxprobe_vm_guest_page_cache_bytes",
           "The guest's page cache (meminfo Cached), as its last report claims");
    for (const auto &vm : l.vms)
        if (vm.guest.reported)
            out += fmt::format("daxprobe_vm_guest_page_cache_bytes{{vm=\"{}\"}} {}\n",
                               escapeLabel(vm.vm), vm.guest.pageCacheBytes);
    family("daxprobe_vm_guest_dax_mount_bytes",
           "Size of the pmem devices under the guest's DAX mounts, as its last report claims");
    for (const auto &vm : l.vms)
        if (vm.guest.reported)
            out += fmt::format("daxprobe_vm_guest_dax_mount_bytes{{vm=\"{}\"}} {}\n",
                               escapeLabel(vm.vm), vm.guest.daxMountBytes);
    family("daxprobe_vm_qemu_anon_bytes",
           "Anonymous memory of the VM's QEMU process (guest RAM, guest page cache included)");
    for (const auto &vm : l.vms)
        if (vm.qemuKnown)
            out += fmt::format("daxprobe_vm_qemu_anon_bytes{{vm=\"{}\"}} {}\n", escapeLabel(vm.vm),
                               vm.qemuAnonBytes);
    family("daxprobe_vm_backing_file_cached_bytes",
           "Host page cache of a file backing the VM's memory or disk (a shared file appears "
           "under each VM)");
    for (const auto &vm : l.vms)
        for (const auto &f : vm.files)
            if (f.measured)
                out += fmt::format(
                    "daxprobe_vm_backing_file_cached_bytes{{vm=\"{}\",path=\"{}\",role=\"{}\"}} "
                    "{}\n",
                    escapeLabel(vm.vm), escapeLabel(f.path), escapeLabel(f.role), f.cachedBytes);

    family("daxprobe_host_backing_file_cached_bytes",
           "Host page cache of one backing file, once however many VMs share it");
    for (const auto &f : l.files)
        out += fmt::format("daxprobe_host_backing_file_cached_bytes{{path=\"{}\"}} {}\n",
                           escapeLabel(f.file.path), f.file.cachedBytes);
    family("daxprobe_host_backing_file_mapped_bytes",
           "What QEMU maps of a pmem backing file (its mappings' Rss; the most any one VM maps)");
    for (const auto &f : l.files)
        if (f.file.pmemBacking)
            out += fmt::format("daxprobe_host_backing_file_mapped_bytes{{path=\"{}\"}} {}\n",
                               escapeLabel(f.file.path), f.file.mappedBytes);
    family("daxprobe_host_backing_file_read_around_bytes",
           "A pmem backing file's host page cache that no VM maps, when the ledger names it "
           "read-around (more than twice what QEMU maps)");
    for (const auto &f : l.files)
        if (f.readAround)
            out += fmt::format("daxprobe_host_backing_file_read_around_bytes{{path=\"{}\"}} {}\n",
                               escapeLabel(f.file.path), f.readAround->extraBytes);
    family("daxprobe_host_backing_file_vms", "VMs using one backing file");
    for (const auto &f : l.files)
        out += fmt::format("daxprobe_host_backing_file_vms{{path=\"{}\"}} {}\n",
                           escapeLabel(f.file.path), f.vms.size());
    struct Total {
        const char *name, *help;
        std::uint64_t value;
    };
    const Total totals[] = {
        {"daxprobe_host_guest_page_cache_bytes", "Sum of the guests' page cache on this host",
         l.guestPageCacheBytes},
        {"daxprobe_host_guest_dax_mount_bytes", "Sum of the guests' DAX-mounted pmem on this host",
         l.guestDaxMountBytes},
        {"daxprobe_host_qemu_anon_bytes", "Sum of the QEMU processes' anonymous memory",
         l.qemuAnonBytes},
        {"daxprobe_host_backing_files_cached_bytes",
         "Host page cache of the VMs' backing files, each file once", l.filesCachedBytes},
        {"daxprobe_host_vm_memory_bytes",
         "What the VMs cost this host: QEMU anonymous memory plus their files' page cache",
         l.hostBytes()},
    };
    for (const auto &t : totals) {
        family(t.name, t.help);
        out += fmt::format("{} {}\n", t.name, t.value);
    }
}

} // namespace daxprobe::collector
