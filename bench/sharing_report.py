"""The sharing comparison's outputs: the terminal table, an SVG plot of host
memory against N (written by hand, Python stdlib only) and the invariants
`sharing.py --check` asserts. Input: bench/sharing.py's result document
with its summary (sharing_stats.summarise)."""

from xml.sax.saxutils import escape

import appliance_report
from sharing_stats import DAX_VARIANTS

MIB = 1024.0


def _mib(kb):
    return f"{kb / MIB:.0f}"


def _n(v):
    return "-" if v is None else f"{v:.2f}" if isinstance(v, float) else str(v)


def header(result):
    env = result["environment"]
    ra = ", ".join(f"{k} {v}" for k, v in env["read_ahead_kb"].items())
    return (f"host kernel {env['host_kernel']}, {env['qemu']} ({env['accel']}), "
            f"{env['host_cpus']} CPUs, THP {env.get('thp_enabled')}, KSM run={env.get('ksm_run')}, "
            f"load {env['loadavg_start'][0]:.1f} -> "
            f"{env.get('loadavg_end', [float('nan')])[0]:.1f}; read_ahead_kb of the images' "
            f"device: {ra}; guest kernel {env['guest_kernel']}, guest RAM {env['guest_memory']}, "
            f"pmem {env['pmem_size']}")


def table(result):
    s = result["summary"]
    names = list(s["series"])
    ns = result["ns"]
    rows = {name: {r["n"]: r for r in s["series"][name]} for name in names}

    def grid(title, key):
        out = [title, "| N | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
        for n in ns:
            cells = [_mib(rows[x][n][key]) if n in rows[x] else "-" for x in names]
            out.append(f"| {n} | " + " | ".join(cells) + " |")
        return out

    out = [f"sharing comparison: N guests booted at once from one read-only image "
           f"({len(result['points'])} points, {result['wall_seconds']} s)", header(result), ""]
    out += grid("host total = sum of each QEMU's own memory + host page cache of the shared "
                "image, counted once [MiB]", "total_kb")
    out += [""] + grid("sum of each QEMU's own memory (anonymous; under KSM Pss_Anon; "
                       "virtio-fs: + memfd RAM + its virtiofsd's anonymous) [MiB]", "anon_kb")
    out += [""] + grid("host page cache of the shared image [MiB]", "cache_kb")
    out += [""] + grid("sum of QEMU PSS (shared file pages split between the QEMUs "
                       "mapping them) [MiB]", "pss_kb")
    out += ["", "per-guest cost (fitted slope) and break-even N against virtio-blk "
            "(measured: first N of the sweep from which DAX stays below; model: where "
            "the fitted lines cross):"]
    for name in names:
        fit = _fit(s, name)
        line = f"  {name:22} {fit['slope_kb'] / MIB:6.1f} MiB per guest" if fit else f"  {name}"
        be = s["break_even"].get(name)
        if be:
            model = be["model_n"]
            line += (f", vs {be['baseline']}: measured N = {_n(be['measured_n'])}, model N = "
                     + ("never (per-guest cost not smaller)" if model is None
                        else "<= 1" if model <= 1 else f"{model:.2f}"))
        out.append(line)
    best = s.get("best_dax")
    if best:
        out += ["", f"break-even N against the best DAX series, {best} (lowest total at its "
                "largest N): the first N from which the series stays below it"]
        for name, be in s["vs_best_dax"].items():
            model = be["model_n"]
            out.append(f"  {name:22} measured N = {_n(be['measured_n'])}, model N = "
                       + ("never" if model is None else "<= 1" if model <= 1 else f"{model:.2f}"))
    out += ksm_lines(result)
    out += ["", "guests (min-max over every guest of the series):"]
    for name in names:
        gs = [g for p in result["points"] if p["series"] == name for g in p["guests"]]
        out.append(f"  {name:22} root verdict {sorted({str(g['guest']['root_verdict']) for g in gs})}"
                   f", SWIOTLB {_span([g['guest']['swiotlb_mb'] for g in gs])} MiB, MemTotal "
                   f"{_span([g['guest']['meminfo']['MemTotal'] // 1024 for g in gs])} MiB, "
                   f"first report {_span([round(g['first_report_s']) for g in gs])} s")
        out.append(f"  {'':22} {dma_line(gs)}")
    out += ["", "README (When DAX pays):", ""] + readme_table(result)
    return "\n".join(out)


def readme_table(result):
    """The README's table: host total per N, per-guest cost, break-even N."""
    s = result["summary"]
    names = list(s["series"])
    rows = {name: {r["n"]: r for r in s["series"][name]} for name in names}
    heads = [f"`{n.replace('+noforce', '` + `swiotlb=noforce')}`" for n in names]
    out = ["| host total [MiB] | " + " | ".join(heads) + " |", "|---" * (len(names) + 1) + "|"]
    for n in result["ns"]:
        out.append(f"| N = {n} | " + " | ".join(_mib(rows[x][n]["total_kb"]) if n in rows[x]
                                               else "-" for x in names) + " |")
    fits = [_fit(s, x) for x in names]
    out.append("| per guest | " + " | ".join(_mib(f["slope_kb"]) if f else "-" for f in fits)
               + " |")

    def cell(be):
        return "" if be is None else "never" if be["measured_n"] is None else str(be["measured_n"])
    out.append("| **break-even N vs blk** | " + " | ".join(
        f"**{cell(s['break_even'].get(x))}**" if s["break_even"].get(x) else "" for x in names)
        + " |")
    if s.get("best_dax"):
        out.append(f"| break-even N vs {s['best_dax']} | " + " | ".join(
            cell(s["vs_best_dax"].get(x)) for x in names) + " |")
    return out


def ksm_lines(result):
    """ksmd's work per KSM point: pages merged, CPU time, how long it took."""
    pts = [p for p in result["points"] if p.get("ksm")]
    if not pts:
        return []
    settings = ", ".join(f"{k}={v}" for k, v in pts[0]["ksm"]["settings"].items())
    out = ["", f"KSM ({settings}): read after two full scans past the last guest's readiness"]
    for p in pts:
        k, c = p["ksm"], p["ksm"]["counters"]
        out.append(f"  {p['series']} N={p['n']}: pages_shared {c['pages_shared']}, pages_sharing "
                   f"{c['pages_sharing']} ({int(c['pages_sharing']) * 4 // 1024} MiB saved, host-"
                   f"wide), ksmd CPU {k['ksmd_cpu_s']} s since KSM was turned on, settled in "
                   f"{k['settle_s']} s")
    return out


def dma_line(guests):
    """Who could need a bounce buffer, over a series' guests."""
    dmas = [g.get("dma") or {} for g in guests]
    narrow = sorted({f"{d['id']} ({d['dma_mask_bits']}-bit, {d['driver']})"
                     for x in dmas for d in x.get("pci") or []
                     if d["driver"] and (d["dma_mask_bits"] or 64) < 64})
    ap = sorted({v["name"] for x in dmas for v in x.get("virtio") or [] if v["access_platform"]})
    used = [x.get("swiotlb_used_slabs") for x in dmas]
    return (f"DMA: PCI devices with a driver and a mask < 64 bits: {', '.join(narrow) or 'none'}; "
            f"virtio with ACCESS_PLATFORM: {', '.join(ap) or 'none'}; SWIOTLB slabs in use "
            f"after the workload: {_span(used)}")


def _fit(summary, name):
    be = summary["break_even"].get(name)
    if be:
        return be["dax_fit"]
    for other in summary["break_even"].values():
        if other["baseline"] == name:
            return other["blk_fit"]
    return None


def _span(values):
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    lo, hi = min(values), max(values)
    return f"{lo}" if lo == hi else f"{lo}-{hi}"


COLOURS = dict(appliance_report.COLOURS, **{"blk-ksm": "#8172b3", "virtiofs-auto": "#937860",
                                             "virtiofs-none": "#da8bc3", "nvdimm-erofs": "#ccb974"})


def _colour(name):
    return COLOURS.get(name.split("+")[0].split(" ")[0], "#888")


def short_header(result):
    """The environment in one line that fits the plot."""
    env = result["environment"]
    qemu = env["qemu"].replace("QEMU emulator version ", "QEMU ").split(" (")[0]
    ra = sorted({str(v) for v in env["read_ahead_kb"].values()})
    thp = (env.get("thp_enabled") or "?").split("[")[-1].split("]")[0]
    return (f"host {env['host_kernel']}, {qemu} ({env['accel']}), guest {env['guest_kernel']} "
            f"{env['guest_memory']}, read_ahead_kb {'/'.join(ra)}, THP {thp}, "
            f"KSM run={env.get('ksm_run')}")


def svg(result, width=860, height=460):
    """Host total [MiB] against N, one line per series (+noforce dashed)."""
    s = result["summary"]
    ns = result["ns"]
    left, right, top, bottom = 70, width - 260, 50, height - 60
    vmax = appliance_report._nice(max(r["total_kb"] for rows in s["series"].values()
                                      for r in rows) / MIB)
    nmax = max(ns)
    xs = lambda n: left + (right - left) * ((n - 1) / (nmax - 1) if nmax > 1 else 0.5)  # noqa: E731
    ys = lambda v: bottom - (bottom - top) * v / vmax  # noqa: E731
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{left}" y="22" font-size="15" font-weight="bold">Host memory for N guests '
           f'sharing one read-only image [MiB]</text>',
           f'<text x="{left}" y="38" font-size="11">{escape(short_header(result))}</text>']
    for i in range(5):
        v = vmax * i / 4
        out.append(f'<line x1="{left}" y1="{ys(v):.1f}" x2="{right}" y2="{ys(v):.1f}" '
                   f'stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{ys(v) + 4:.1f}" font-size="11" '
                   f'text-anchor="end">{appliance_report._short(v)}</text>')
    for n in ns:
        out.append(f'<text x="{xs(n):.1f}" y="{bottom + 16}" font-size="11" '
                   f'text-anchor="middle">{n}</text>')
    out.append(f'<text x="{(left + right) / 2:.0f}" y="{bottom + 36}" font-size="12" '
               f'text-anchor="middle">N guests booted at once (host total = QEMU anon + the '
               f'image\'s host page cache once)</text>')
    out.append(f'<line x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="black"/>')
    for i, (name, rows) in enumerate(s["series"].items()):
        colour = _colour(name)
        dash = ' stroke-dasharray="6,4"' if "+" in name else ""
        pts = " ".join(f"{xs(r['n']):.1f},{ys(r['total_kb'] / MIB):.1f}" for r in rows)
        out.append(f'<polyline points="{pts}" fill="none" stroke="{colour}" '
                   f'stroke-width="2"{dash}/>')
        for r in rows:
            out.append(f'<circle cx="{xs(r["n"]):.1f}" cy="{ys(r["total_kb"] / MIB):.1f}" r="3" '
                       f'fill="{colour}"/>')
        be = s["break_even"].get(name)
        label = name
        if be:
            label += (f" (break-even N {be['measured_n']})" if be["measured_n"]
                      else " (never below blk)")
        y = top + 10 + 20 * i
        out.append(f'<line x1="{right + 10}" y1="{y}" x2="{right + 34}" y2="{y}" '
                   f'stroke="{colour}" stroke-width="2"{dash}/>')
        out.append(f'<text x="{right + 38}" y="{y + 4}" font-size="11">{escape(label)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def invariants(result):
    """What must hold whatever the timing; returns the failures."""
    fails = []
    for p in result["points"]:
        tag = f"{p['series']} N={p['n']}"
        if not p["image_unchanged"]:
            fails.append(f"{tag}: the shared image was modified")
        if not p["shared_page_cache"]["bytes"]:
            fails.append(f"{tag}: none of the shared image in the host page cache")
        for i, g in enumerate(p["guests"]):
            gr, cmd = g["guest"], (g["guest"]["workload"].get("command") or {})
            if gr.get("error"):
                fails.append(f"{tag} #{i}: guest error {gr['error']!r}")
            if cmd.get("exit_status") != 0:
                fails.append(f"{tag} #{i}: workload exit status {cmd.get('exit_status')}")
            # DAX as the kernel has it: the device's queue/dax and the root's
            # mount options (mountinfo); daxprobe's verdict must agree.
            dax = p["variant"] in DAX_VARIANTS
            opts = root_options(g.get("root_mount"))
            kernel_dax = gr.get("queue_dax") == "1" and bool(opts & {"dax", "dax=always"})
            if kernel_dax != dax:
                fails.append(f"{tag} #{i}: the kernel's queue/dax {gr.get('queue_dax')}, root "
                             f"mount options {sorted(opts)}: DAX {kernel_dax}, want {dax}")
            if (gr.get("root_verdict") == "dax_active") != kernel_dax:
                fails.append(f"{tag} #{i}: daxprobe's root verdict {gr.get('root_verdict')}, "
                             f"the kernel's DAX {kernel_dax}")
            # readonly=on: virtio-blk offers VIRTIO_BLK_F_RO and an unarmed
            # NVDIMM makes the region read-only; virtio-pmem has no such flag.
            if p["variant"].startswith("virtiofs"):  # no device: the mount itself
                if "ro" not in opts:
                    fails.append(f"{tag} #{i}: virtio-fs root mounted {sorted(opts)}, want ro")
            elif p["variant"] != "virtio-pmem" and g.get("block_ro") != "1":
                fails.append(f"{tag} #{i}: root device ro={g.get('block_ro')}, want 1")
            if "swiotlb=noforce" in p["append"] and gr.get("swiotlb_mb"):
                fails.append(f"{tag} #{i}: SWIOTLB {gr['swiotlb_mb']} MiB under swiotlb=noforce")
        fails += ksm_failures(p, tag)
    fails += break_even_failures(result)
    if result.get("environment", {}).get("images_unchanged", {}) and not all(
            result["environment"]["images_unchanged"].values()):
        fails.append(f"an image's content changed: {result['environment']['images_unchanged']}")
    return fails


def ksm_failures(point, tag):
    """A KSM point was read after ksmd settled and KSM merged something."""
    if point["variant"] != "blk-ksm":
        return []
    k = point.get("ksm")
    if not k:
        return [f"{tag}: no KSM reading"]
    c = k["counters"]
    fails = []
    if int(c["full_scans"]) < k["full_scans_at_ready"] + 2:
        fails.append(f"{tag}: read after {c['full_scans']} full scans, want >= "
                     f"{k['full_scans_at_ready'] + 2}")
    if int(c["pages_sharing"]) <= 0:
        fails.append(f"{tag}: KSM merged nothing (pages_sharing {c['pages_sharing']})")
    return fails


def root_options(mountinfo_line):
    """The mount and superblock options of the root's mountinfo line."""
    fields = (mountinfo_line or "").split()
    if " - " not in f" {mountinfo_line or ''} " or len(fields) < 6:
        return set()
    sep = fields.index("-")
    return set(fields[5].split(",")) | set(fields[sep + 3].split(",") if len(fields) > sep + 3
                                             else [])


def break_even_failures(result):
    """Every series but blk (DAX or not) measured at two N or more against a virtio-blk series
    at the same N has its break-even computed, against virtio-blk booted with
    the same extra kernel command line whenever that was measured."""
    fails = []
    pts = result["points"]
    ns = {}
    for p in pts:
        ns.setdefault(p["series"], set()).add(p["n"])
    blk = {p["append"]: p["series"] for p in pts if p["variant"] == "blk"}
    for name in {p["series"] for p in pts if p["variant"] != "blk"}:
        append = next(p["append"] for p in pts if p["series"] == name)
        base = blk.get(append, blk.get(""))
        if base is None or len(ns[name] & ns[base]) < 2:
            continue
        be = result["summary"]["break_even"].get(name)
        if not be or be.get("baseline") != base:
            fails.append(f"{name}: no break-even against {base} "
                         f"({(be or {}).get('baseline')!r})")
        elif not (be.get("dax_fit") and be.get("blk_fit")) or \
                sorted(be.get("ns") or []) != sorted(ns[name] & ns[base]):
            fails.append(f"{name}: break-even not computed over N {sorted(ns[name] & ns[base])}:"
                         f" {be}")
    return fails
