"""The sharing comparison's arithmetic (bench/sharing.py): the host's
memory for N guests booted from one image, and the break-even N where a DAX
variant costs the host less than virtio-blk. Pure functions of the result
document (no I/O), checked by test_sharing_stats.py.

A point is one boot of N guests at once; its host total is the sum of every
QEMU's own memory plus the host page cache of the one shared image, counted
once per host (the ledger: the file pages QEMU maps are that page cache, not
QEMU's). A QEMU's own memory is its anonymous memory, except:
- under KSM (the point has "ksm"), its Pss_Anon: a merged page still counts
  in every sharer's Anonymous but is held once, split among them by PSS;
- under virtio-fs (the guest has "qemu_rss_shmem_kb"), guest RAM is a shared
  memfd, not anonymous: Anonymous + RssShmem, plus its virtiofsd's own
  Anonymous (the daemon maps that memfd too: counted in the QEMU only); the
  shared folder's host page cache (virtiofsd's reads) is the image's.
"""

import result_file

BASELINE = "blk"
NOFORCE = "swiotlb=noforce"
DAX_VARIANTS = ("nvdimm-dax", "virtio-pmem", "nvdimm-erofs")


def series_name(variant, append):
    """The line a (variant, extra kernel command line) pair is drawn as."""
    return variant + ("+noforce" if append == NOFORCE else f" [{append}]" if append else "")


def point_totals(point):
    """One point -> {n, anon_kb, pss_kb, rss_kb, cache_kb, total_kb}: sums over
    its guests' QEMUs, the shared image's host page cache once."""
    guests = point["guests"]
    if len(guests) != point["n"]:
        raise ValueError(f"{point['series']} N={point['n']}: {len(guests)} guest records")
    rollups = [g["qemu_rollup"] for g in guests]
    anon = sum(guest_memory_kb(g, "ksm" in point) for g in guests)
    cache = point["shared_page_cache"]["bytes"] // 1024
    return {"n": point["n"], "anon_kb": anon, "pss_kb": sum(r["Pss"] for r in rollups),
            "rss_kb": sum(r["Rss"] for r in rollups), "cache_kb": cache,
            "total_kb": anon + cache}


def guest_memory_kb(guest, ksm):
    """One guest's own host memory (the module's docstring says which)."""
    r = guest["qemu_rollup"]
    if ksm:
        if "Pss_Anon" not in r:
            raise ValueError("a KSM point without Pss_Anon in smaps_rollup (kernel < 5.13?)")
        return r["Pss_Anon"]
    if "qemu_rss_shmem_kb" in guest:
        return r["Anonymous"] + guest["qemu_rss_shmem_kb"] + guest["virtiofsd_rollup"]["Anonymous"]
    return r["Anonymous"]


def by_series(points):
    """{series: [totals, ...] sorted by N}, series in first-seen order."""
    out = {}
    for p in points:
        out.setdefault(p["series"], []).append(point_totals(p))
    for rows in out.values():
        rows.sort(key=lambda r: r["n"])
        ns = [r["n"] for r in rows]
        if len(set(ns)) != len(ns):
            raise ValueError(f"a series has N repeated: {ns}")
    return out


def fit_line(rows, key="total_kb"):
    """Least-squares total = intercept + slope * N; None with fewer than two N."""
    if len(rows) < 2:
        return None
    xs, ys = [r["n"] for r in rows], [r[key] for r in rows]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return {"intercept_kb": my - slope * mx, "slope_kb": slope}


def break_even(dax_rows, blk_rows, key="total_kb"):
    """When does the DAX line drop below virtio-blk's?

    measured_n: the smallest N of the sweep (N measured in both) from which
      the DAX total is below blk's at every larger N too; None if it never is.
    model_n: where the two fitted lines cross, (a_dax - a_blk) / (b_blk - b_dax);
      None when DAX's per-guest slope is not smaller (the lines never cross
      that way); at most 1 means DAX is cheaper from the first guest.
    """
    blk = {r["n"]: r[key] for r in blk_rows}
    common = [r for r in dax_rows if r["n"] in blk]
    below = [r[key] < blk[r["n"]] for r in common]
    measured = None
    for i in range(len(common)):
        if all(below[i:]):
            measured = common[i]["n"]
            break
    fd, fb = fit_line(dax_rows, key), fit_line(blk_rows, key)
    model = None
    if fd and fb and fb["slope_kb"] > fd["slope_kb"]:
        model = (fd["intercept_kb"] - fb["intercept_kb"]) / (fb["slope_kb"] - fd["slope_kb"])
    return {"measured_n": measured, "model_n": model, "dax_fit": fd, "blk_fit": fb,
            "ns": [r["n"] for r in common]}


def baseline_for(series, variants_appends):
    """The virtio-blk series a DAX series is compared with: blk with the same
    extra command line if it was measured, else plain blk."""
    _, append = variants_appends[series]
    same = series_name(BASELINE, append)
    return same if same in variants_appends else BASELINE


def best_dax(rows, variants_appends):
    """The DAX series with the lowest host total at its largest N (ties: the
    smaller slope, then the name); None without DAX series."""
    dax = [s for s, (v, _) in variants_appends.items() if v in DAX_VARIANTS and rows.get(s)]
    if not dax:
        return None
    fit = {s: fit_line(rows[s]) for s in dax}
    return min(dax, key=lambda s: (rows[s][-1]["total_kb"],
                                   fit[s]["slope_kb"] if fit[s] else 0, s))


def summarise(result):
    """{"series": {name: rows}, "break_even": {series: break_even(...) +
    baseline}, "best_dax": name, "vs_best_dax": {series: break_even(...)}}:
    every series but blk against its virtio-blk baseline, and every series
    but the best DAX one against that (is it cheaper than the best DAX?)."""
    rows = by_series(result["points"])
    va = {p["series"]: (p["variant"], p["append"]) for p in result["points"]}
    best = best_dax(rows, va)
    out = {"series": rows, "break_even": {}, "best_dax": best, "vs_best_dax": {}}
    for name, (variant, _) in va.items():
        if best and name != best:
            out["vs_best_dax"][name] = {"baseline": best, **break_even(rows[name], rows[best])}
        if variant == BASELINE:
            continue
        base = baseline_for(name, va)
        if base not in rows:
            continue
        out["break_even"][name] = {"baseline": base, **break_even(rows[name], rows[base])}
    return out


def headline(summary):
    """bench/results figures (result_file): each DAX series against its
    virtio-blk baseline of the same run: the host total at the largest N
    both measured, the fitted memory per guest, the break-even N."""
    figures = []
    for name, be in summary["break_even"].items():
        base = be["baseline"]
        if not be["ns"]:
            continue
        n = max(be["ns"])
        total = {s: next(r["total_kb"] for r in summary["series"][s] if r["n"] == n)
                 for s in (name, base)}
        figures.append(result_file.figure(
            f"{name}: host total at N={n} (QEMU anon + the image's page cache once)", "MiB",
            round(total[name] / 1024), f"{base} at N={n}, the same run", round(total[base] / 1024),
            result_file.ratio(total[name], total[base]), "value / floor"))
        if be["dax_fit"] and be["blk_fit"]:
            slope, base_slope = be["dax_fit"]["slope_kb"], be["blk_fit"]["slope_kb"]
            figures.append(result_file.figure(
                f"{name}: host memory per guest (fitted slope)", "MiB", round(slope / 1024, 1),
                f"{base}'s slope, the same run", round(base_slope / 1024, 1),
                result_file.ratio(slope, base_slope), "value / floor"))
        figures.append(result_file.figure(
            f"{name}: break-even N against {base}, measured (null: never)", "guests",
            be["measured_n"], None, None, None, None))
    return figures
