"""The appliance comparison's arithmetic: per-run metrics, the host memory
breakdown, and mean ± sample standard deviation per variant. Pure functions
of the run records bench/appliance.py writes (no I/O), so the unit test
(test_appliance_stats.py) checks them over a captured result."""

import math

import result_file

VARIANTS = ["blk", "nvdimm", "nvdimm-dax", "virtio-pmem"]

# (key, label, unit): the order of the table and of the JSON summary.
METRICS = [
    ("first_report_s", "QEMU start -> agent's first report", "s"),
    ("workload_s", "workload (wall, guest)", "s"),
    ("shutdown_s", "shutdown (host says -> QEMU gone)", "s"),
    ("device_bringup_s", "root device: modprobe -> device node (guest)", "s"),
    ("device_initcalls_ms", "root device modules' init (initcall_debug)", "ms"),
    ("guest_memtotal_kb", "guest MemTotal", "kB"),
    ("guest_swiotlb_kb", "guest SWIOTLB bounce buffer (part of MemTotal's loss)", "kB"),
    ("guest_cached_kb", "guest Cached after workload", "kB"),
    ("guest_buffers_kb", "guest Buffers after workload", "kB"),
    ("guest_memavailable_kb", "guest MemAvailable after workload", "kB"),
    ("workload_cached_delta_kb", "guest Cached growth during workload", "kB"),
    ("faults_minor", "workload minor faults", ""),
    ("faults_major", "workload major faults", ""),
    ("faults_dax_pmd_tried", "workload DAX PMD faults tried (dax_pmd_fault_done)", ""),
    ("faults_dax_pmd_fallback", "  of which fell back to 4 KiB PTEs", ""),
    ("faults_dax_pmd_mapped", "  of which mapped 2 MiB (tried - fell back)", ""),
    ("faults_dax_pte", "workload DAX PTE faults", ""),
    ("qemu_peak_rss_kb", "QEMU peak RSS (wait4)", "kB"),
    ("qemu_pss_kb", "QEMU PSS (before shutdown)", "kB"),
    ("qemu_anon_kb", "QEMU anonymous memory", "kB"),
    ("backing_rss_kb", "resident in QEMU's pmem file mapping", "kB"),
    ("host_cache_kb", "host page cache of the root image/backing file", "kB"),
    ("host_total_kb", "host total = QEMU anon + host page cache", "kB"),
]


def mean(values):
    if not values:
        raise ValueError("mean of no values")
    return math.fsum(values) / len(values)


def sample_sd(values):
    """Sample standard deviation (n - 1); None for fewer than two values."""
    n = len(values)
    if n < 2:
        return None
    m = mean(values)
    return math.sqrt(math.fsum((v - m) ** 2 for v in values) / (n - 1))


def memory_breakdown(run):
    """What the host spends on one guest: QEMU's anonymous memory (guest RAM
    as touched, the guest's own page cache included, plus QEMU and TCG) plus
    the host page cache held by the guest's root image or pmem backing file.
    File pages QEMU maps (the pmem backing file) are page cache, so they are
    counted once, on the page cache side. kB."""
    host = run["host"]
    anon = host["qemu_rollup"]["Anonymous"]
    cache = sum(host["page_cache"][name]["bytes"] for name in host["images"]) // 1024
    return {"qemu_anon_kb": anon, "host_cache_kb": cache, "host_total_kb": anon + cache}


def _get(d, *path):
    for p in path:
        if not isinstance(d, dict) or d.get(p) is None:
            return None
        d = d[p]
    return d


def _pmd_mapped(cmd):
    tried, fell = _get(cmd, "faults", "dax_pmd"), _get(cmd, "faults", "dax_pmd_fallback")
    return tried - fell if tried is not None and fell is not None else None


def run_metrics(run):
    """One run record -> {metric key: number or None}."""
    host, guest = run["host"], run["guest"]
    cmd = _get(guest, "workload", "command") or {}
    mem = guest.get("meminfo") or {}
    inits = guest.get("initcalls_us") or {}
    backing = host.get("backing") or {}
    m = {
        "first_report_s": host.get("first_report_s"),
        "workload_s": cmd.get("wall_seconds"),
        "shutdown_s": host.get("shutdown_s"),
        "device_bringup_s": guest.get("device_bringup_s"),
        "device_initcalls_ms": (sum(inits.values()) / 1000.0) if inits else None,
        "guest_memtotal_kb": mem.get("MemTotal"),
        "guest_swiotlb_kb": (guest["swiotlb_mb"] * 1024 if guest.get("swiotlb_mb") is not None
                             else None),
        "guest_cached_kb": mem.get("Cached"),
        "guest_buffers_kb": mem.get("Buffers"),
        "guest_memavailable_kb": mem.get("MemAvailable"),
        "workload_cached_delta_kb": _get(cmd, "page_cache", "cached_kb_delta"),
        "faults_minor": _get(cmd, "faults", "minor"),
        "faults_major": _get(cmd, "faults", "major"),
        "faults_dax_pmd_tried": _get(cmd, "faults", "dax_pmd"),
        "faults_dax_pmd_fallback": _get(cmd, "faults", "dax_pmd_fallback"),
        "faults_dax_pmd_mapped": _pmd_mapped(cmd),
        "faults_dax_pte": _get(cmd, "faults", "dax_pte"),
        "qemu_peak_rss_kb": host.get("qemu_peak_rss_kb"),
        "qemu_pss_kb": _get(host, "qemu_rollup", "Pss"),
        "backing_rss_kb": sum(v.get("Rss", 0) for v in backing.values()) if backing else None,
    }
    m.update(memory_breakdown(run))
    return m


def summarise(runs):
    """{variant: {metric: {"mean", "sd", "n", "values"}}}, variants in the
    usual order; a metric no run of a variant has is left out."""
    by_variant = {}
    for run in runs:
        by_variant.setdefault(run["variant"], []).append(run_metrics(run))
    order = [v for v in VARIANTS if v in by_variant] + sorted(set(by_variant) - set(VARIANTS))
    out = {}
    for v in order:
        out[v] = {}
        for key, _, _ in METRICS:
            values = [r[key] for r in by_variant[v] if r.get(key) is not None]
            if values:
                out[v][key] = {"mean": mean(values), "sd": sample_sd(values),
                               "n": len(values), "values": values}
    return out


def ratio(summary, key, variant, base="blk"):
    """mean(variant) / mean(base) for one metric, None when either is missing."""
    a, b = _get(summary, variant, key, "mean"), _get(summary, base, key, "mean")
    return a / b if a is not None and b else None


def headline(summary):
    """bench/results figures (result_file): each variant's host total and
    guest Cached growth against virtio-blk's in the same run (means, MiB)."""
    figures = []
    for v in [v for v in summary if v != "blk"]:
        for key, what in (("host_total_kb", "host total (QEMU anon + host page cache)"),
                          ("workload_cached_delta_kb", "guest Cached growth during the workload")):
            a, b = _get(summary, v, key, "mean"), _get(summary, "blk", key, "mean")
            if a is None:
                continue
            r = ratio(summary, key, v)
            figures.append(result_file.figure(
                f"{v}: {what}", "MiB", round(a / 1024, 1),
                "blk (root on virtio-blk), the same run" if b is not None else None,
                round(b / 1024, 1) if b is not None else None,
                round(r, 3) if r is not None else None, "value / floor, means"))
    return figures
