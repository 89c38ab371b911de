"""The appliance comparison's outputs: the terminal table, an SVG plot
(written by hand, Python stdlib only) and the invariants the meson test
asserts. Input: the result document of bench/appliance.py."""

from xml.sax.saxutils import escape

import appliance_stats as stats

COLOURS = {"blk": "#4c72b0", "nvdimm": "#dd8452", "nvdimm-dax": "#55a868",
           "virtio-pmem": "#c44e52"}


def _fmt(cell, unit):
    if cell is None:
        return "-"
    m, sd = cell["mean"], cell["sd"]
    if unit == "kB":  # shown in MiB; the JSON keeps kB
        m, sd = m / 1024, (sd / 1024 if sd is not None else None)
    digits = {"s": 2, "": 0}.get(unit, 0 if m >= 100 else 1)
    text = f"{m:.{digits}f}"
    return text + (f" ± {sd:.{digits}f}" if sd is not None else "")


def table(result):
    summary = result["summary"]
    variants = list(summary)
    rows = [["metric (mean ± sample SD)"] + variants]
    for key, label, unit in stats.METRICS:
        if not any(key in summary[v] for v in variants):
            continue
        u = "MiB" if unit == "kB" else unit
        rows.append([f"{label}{f' [{u}]' if u else ''}"]
                    + [_fmt(summary[v].get(key), unit) for v in variants])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                       for i, (c, w) in enumerate(zip(r, widths))) for r in rows]
    lines.insert(1, "-" * len(lines[0]))
    n = result["runs_per_variant"]
    out = [f"appliance comparison: {n} boot(s) per variant, guest kernel {result['kernel']}, "
           f"QEMU under TCG (times inflated: compare ratios; memory figures hold)", ""] + lines
    out += ["", "costs: initramfs per root device (uncompressed / gzip -6, module bytes)"]
    base = result["initramfs"].get("blk")
    for dev, info in result["initramfs"].items():
        grow = ""
        if base and dev != "blk":
            grow = (f"  +{(info['bytes'] - base['bytes']) / 1024:.0f} KiB / "
                    f"+{(info['gzip_bytes'] - base['gzip_bytes']) / 1024:.0f} KiB gz vs blk")
        out.append(f"  {dev:12} {info['bytes'] / 1024:8.0f} KiB / {info['gzip_bytes'] / 1024:6.0f}"
                   f" KiB gz, modules {info['module_bytes'] / 1024:.0f} KiB, device: "
                   f"{' '.join(info.get('device_modules', info['modules']))}{grow}")
    root = result["root_image"]
    out.append(f"appliance root: {root['files']} files, {root['bytes'] / 1e6:.1f} MB payload, "
               f"ext4 image {root['size'] >> 20} MiB")
    return "\n".join(out)


PANELS = [
    ("Times [s] (TCG: only ratios mean anything)", 1.0,
     ["first_report_s", "workload_s", "shutdown_s", "device_bringup_s"],
     ["to 1st report", "workload", "shutdown", "root dev up"]),
    ("Guest memory after the workload [MiB]", 1024.0,
     ["guest_cached_kb", "guest_buffers_kb", "workload_cached_delta_kb"],
     ["Cached", "Buffers", "Cached growth"]),
    ("Guest RAM [MiB] (MemTotal: what the kernel kept for itself shows here)", 1024.0,
     ["guest_memtotal_kb", "guest_memavailable_kb", "guest_swiotlb_kb"],
     ["MemTotal", "MemAvailable", "SWIOTLB (a cost)"]),
    ("Host memory for the guest [MiB]", 1024.0,
     ["qemu_anon_kb", "host_cache_kb", "host_total_kb", "qemu_pss_kb", "qemu_peak_rss_kb"],
     ["QEMU anon", "host page cache", "total (anon+cache)", "QEMU PSS", "QEMU peak RSS"]),
    ("Workload page faults [thousands]", 1000.0,
     ["faults_minor", "faults_major", "faults_dax_pmd_tried", "faults_dax_pmd_mapped",
      "faults_dax_pte"],
     ["minor", "major", "PMD tried", "PMD mapped 2M", "DAX PTE"]),
    ("Costs of the root device: module init [ms] (initramfs growth: notes below)", 1.0,
     ["device_initcalls_ms"], ["root device modules' init"]),
]


def _panel(summary, variants, title, scale, keys, labels, x0, y0, w, h):
    out = [f'<text x="{x0}" y="{y0 + 16}" font-size="15" font-weight="bold">{escape(title)}</text>']
    top, bottom, left = y0 + 30, y0 + h - 40, x0 + 50
    tops = [0.0]
    for k in keys:
        for v in variants:
            c = summary[v].get(k)
            if c:
                tops.append((c["mean"] + (c["sd"] or 0)) / scale)
    vmax = _nice(max(tops))
    ys = lambda val: bottom - (bottom - top) * (val / vmax if vmax else 0)  # noqa: E731
    for i in range(5):  # grid and axis labels
        val = vmax * i / 4
        y = ys(val)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{x0 + w}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end">'
                   f'{_short(val)}</text>')
    gw = (x0 + w - left) / len(keys)
    bw = gw * 0.8 / len(variants)
    for gi, (k, label) in enumerate(zip(keys, labels)):
        gx = left + gi * gw + gw * 0.1
        for vi, v in enumerate(variants):
            c = summary[v].get(k)
            if not c:
                continue
            m, sd = c["mean"] / scale, (c["sd"] or 0) / scale
            x, y = gx + vi * bw, ys(m)
            out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{bw - 2:.1f}" '
                       f'height="{max(bottom - y, 0):.1f}" fill="{COLOURS.get(v, "#888")}"/>')
            if sd:
                cx = x + (bw - 2) / 2
                out.append(f'<line x1="{cx:.1f}" y1="{ys(m + sd):.1f}" x2="{cx:.1f}" '
                           f'y2="{ys(max(m - sd, 0)):.1f}" stroke="black"/>')
            out.append(f'<text x="{x + (bw - 2) / 2:.1f}" y="{y - 3:.1f}" font-size="9" '
                       f'text-anchor="middle">{_short(m)}</text>')
        out.append(f'<text x="{gx + gw * 0.4:.1f}" y="{bottom + 16}" font-size="12" '
                   f'text-anchor="middle">{escape(label)}</text>')
    out.append(f'<line x1="{left}" y1="{bottom}" x2="{x0 + w}" y2="{bottom}" stroke="black"/>')
    return out


def _nice(v):
    if v <= 0:
        return 1.0
    p = 10 ** len(str(int(v))) / 10 if v >= 1 else 1.0
    for f in (1, 2, 3, 4, 6, 8, 10):  # quarters of these read well
        if v <= f * p:
            return f * p
    return 10 * p


def _short(v):
    return f"{v:.0f}" if abs(v) >= 100 else (f"{v:.1f}" if abs(v) >= 10 else f"{v:.2f}")


def svg(result):
    summary = result["summary"]
    variants = list(summary)
    w, ph = 1000, 280
    h = 70 + ph * len(PANELS) + 40
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
           f'font-family="sans-serif"><rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="20" y="26" font-size="18" font-weight="bold">daxprobe appliance '
           f'comparison: {result["runs_per_variant"]} boot(s) per variant, mean ± sample SD'
           f'</text>']
    for i, v in enumerate(variants):
        x = 20 + i * 170
        out.append(f'<rect x="{x}" y="40" width="14" height="14" fill="{COLOURS.get(v, "#888")}"/>')
        out.append(f'<text x="{x + 20}" y="52" font-size="13">{escape(v)}</text>')
    for i, (title, scale, keys, labels) in enumerate(PANELS):
        out += _panel(summary, variants, title, scale, keys, labels, 20, 70 + i * ph, w - 40, ph)
    base = result["initramfs"].get("blk")
    notes = [f"guest kernel {result['kernel']}, QEMU TCG"]
    if base:
        for dev, info in result["initramfs"].items():
            if dev != "blk":
                notes.append(f"initramfs {dev}: +{(info['gzip_bytes'] - base['gzip_bytes']) / 1024:.0f}"
                             f" KiB gz vs blk")
    out.append(f'<text x="20" y="{h - 14}" font-size="12">{escape("; ".join(notes))}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def invariants(result):
    """What must hold whatever the timing; returns the failures."""
    fails = []
    for run in result["runs"]:
        tag = f"{run['variant']} #{run['index']}"
        g, cmd = run["guest"], (run["guest"]["workload"].get("command") or {})
        if g.get("error"):
            fails.append(f"{tag}: guest error {g['error']!r}")
        if cmd.get("exit_status") != 0:
            fails.append(f"{tag}: workload exit status {cmd.get('exit_status')} "
                         f"({run['guest']['workload'].get('error')})")
        m = stats.run_metrics(run)
        for key in ("first_report_s", "shutdown_s", "workload_s", "guest_cached_kb",
                    "qemu_peak_rss_kb", "qemu_pss_kb", "faults_minor"):
            if not m.get(key):
                fails.append(f"{tag}: no {key}")
        dax = run["variant"] in ("nvdimm-dax", "virtio-pmem")
        verdict = g.get("root_verdict")
        if dax and verdict != "dax_active":
            fails.append(f"{tag}: root verdict {verdict}, want dax_active")
        if not dax and verdict == "dax_active":
            fails.append(f"{tag}: root verdict dax_active without -o dax")
        if run["variant"] != "blk" and not m.get("host_cache_kb"):
            fails.append(f"{tag}: no host page cache for the pmem backing file")
        # The workload reads every library once: through the page cache that
        # is at least their size of Cached growth; under DAX it is none of it.
        read = library_bytes(g.get("workload_log", ""))
        grew = m.get("workload_cached_delta_kb")
        if read is None or grew is None:
            fails.append(f"{tag}: no library byte count or no Cached growth")
        elif dax and grew * 1024 >= read:
            fails.append(f"{tag}: Cached grew {grew} kB while reading {read} bytes of "
                         f"libraries: DAX should bypass the guest page cache")
        elif not dax and grew * 1024 < read:
            fails.append(f"{tag}: Cached grew only {grew} kB while reading {read} bytes "
                         f"through the page cache")
    return fails


def library_bytes(workload_log):
    """The byte count workload.sh logs for its read of every library."""
    for line in workload_log.splitlines():
        parts = line.split()
        if parts[:1] == ["libraries"] and len(parts) == 4 and parts[3].isdigit():
            return int(parts[3])
    return None
