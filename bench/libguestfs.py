#!/usr/bin/env python3
"""The 2016 comparison with the real system: libguestfs's appliance, stock
against its root on an fsdax NVDIMM with DAX (issue 44, item 7).

  PYTHONPATH=tests/vm bench/libguestfs.py build --rounds 3

Debian 12's libguestfs 1.48 boots the appliance supermin built with daxprobe
in it (meson target guestfs-appliance: harness/guestfs_appliance.py); the
QEMU wrapper (tests/vm/guestfs_hv.py, LIBGUESTFS_HV) leaves libguestfs's
command line alone (stock: the root on virtio-scsi, `snapshot=on`) or moves
the root to an fsdax NVDIMM (dax: private mapping, `root=/dev/pmem0`,
supermin's init mounts it with `dax`). Each launch, as its users run it
(harness/guestfs_session.py: guestfish --listen, --remote run, debug sh,
exit), with both image files dropped from the host page cache first:

- launch and close, timed apart; launch+close is what libguestfs's
  boot-benchmark measures (guestfs_launch + guestfs_close, `-a /dev/null`);
- in the appliance right after the launch: `free -m` (the 2016 mail's
  figure: buff/cache) and /proc/meminfo; then `daxprobe check --json`: what
  it says DAX costs (the bounce buffer verdict; any namespace or mount
  warning naming struct pages or a memory cost), and the fsdax namespace's
  size and map, from which its struct pages are counted here (64 B per 4 KiB
  page: in the namespace with map=dev, in guest RAM with map=mem);
- on the host before the close: QEMU's smaps_rollup (Anonymous, Rss) and
  the host page cache of the image file (the root, or the NVDIMM file);
  after it, QEMU's ru_maxrss from wait4 (the wrapper is its parent; it also
  counts the page cache QEMU maps and TCG's code buffer).

Rounds interleave the two (stock first in even rounds, dax first in odd), so
drift in the shared machine's load hits both; each figure's ratio is the
median of the per-round ratios dax / stock. Writes BUILDDIR/libguestfs/
result.json (every launch's readings) and bench/results/libguestfs.json
(result_file.py), and prints the README's table.
"""

import argparse
import json
import os
import re
import statistics
import sys
import time

import appliance_host as host
import result_file
from harness.guest import GuestError, Skip, TestBedError
from harness.guestfs_session import Launch, appliance_info

SOURCE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODES = ["stock", "dax"]
KIB = 1024
MIB = 1 << 20
STRUCT_PAGE = 64  # bytes per 4 KiB page (x86_64, 6.1)


def log(msg):
    print(msg, flush=True)


def parse_free_m(text):
    """`free -m`'s Mem: line -> {total, used, free, shared, buff_cache, available} MiB."""
    for line in text.splitlines():
        if line.startswith("Mem:"):
            v = [int(x) for x in line.split()[1:7]]
            return dict(zip(["total", "used", "free", "shared", "buff_cache", "available"], v))
    raise ValueError(f"no Mem: line in free -m: {text!r}")


def daxprobe_costs(check):
    """What daxprobe's JSON says DAX costs here, and the fsdax namespace
    facts the struct pages are counted from."""
    bb = check.get("bounce_buffer") or None
    said = []
    for n in check.get("namespaces") or []:
        v = n.get("verdict") or {}
        said += [w for w in (v.get("warnings") or []) + [v.get("summary") or ""]
                 if re.search(r"struct page|memory cost", w or "", re.I)]
    for m in check.get("mounts") or []:
        v = m.get("verdict") or {}
        said += [w for w in (v.get("warnings") or []) + [v.get("summary") or ""]
                 if re.search(r"struct page|memory cost", w or "", re.I)]
    ns = [{"dev": n.get("dev"), "mode": n.get("mode"), "map": n.get("map"), "size": n.get("size"),
           "struct_pages_bytes": (n["size"] // 4096 * STRUCT_PAGE
                                  if n.get("mode") == "fsdax" and n.get("size") else None)}
          for n in check.get("namespaces") or []]
    v = check.get("verdict")
    return {"verdict": v.get("code") if isinstance(v, dict) else v, "exit_code": check.get("exit_code"),
            "bounce_buffer": {"code": bb.get("code"), "summary": bb.get("summary"),
                              "remedy": bb.get("remedy")} if bb else None,
            "struct_pages_said": said, "namespaces": ns}


def one_launch(info, mode, rnd, out, timeout):
    files = {"stock": os.path.join(info["appliance"], "root"), "dax": info["nvdimm"]["path"]}
    for p in files.values():
        host.drop_cache(p)
    image = files[mode]
    with Launch(info, mode, os.path.join(out, "runs"), timeout=timeout) as g:
        launch_s = g.launch()
        free = g.sh("free -m")
        meminfo = g.sh("cat /proc/meminfo")
        rc = g.sh("daxprobe check --json > /tmp/check.json 2>/dev/null; echo $?")
        check = json.loads(g.sh("cat /tmp/check.json"))
        pid = g.qemu_pid()
        rollup = host.smaps_rollup(pid)
        cache = host.page_cache(image)
        # QEMU's mapping of the NVDIMM file (none for the stock root, read
        # through the block layer): with share=off, what the guest wrote
        # there (the struct pages of map=dev among it) is QEMU's anonymous memory.
        mapping = host.smaps_of_files(pid, [image]).get(image) or {}
        close_s = g.close()
        rec = g.record() or {}
    guest_mem = {k: int(v.split()[0]) for k, v in
                 (l.split(":", 1) for l in meminfo.splitlines() if ":" in l)
                 if v.split() and v.split()[0].isdigit()}
    anon_kb = rollup.get("Anonymous")
    r = {"mode": mode, "round": rnd, "launch_s": launch_s, "close_s": close_s,
         "launch_close_s": round(launch_s + close_s, 3),
         "guest": {"free_m": parse_free_m(free), "meminfo_kb": guest_mem,
                   "daxprobe_rc": int(rc), "daxprobe": daxprobe_costs(check)},
         "host": {"qemu_anonymous_kb": anon_kb, "qemu_rss_kb": rollup.get("Rss"),
                  "qemu_ru_maxrss_kb": rec.get("ru_maxrss_kb"), "image": os.path.basename(image),
                  "image_page_cache_kb": cache["bytes"] // KIB,
                  "image_mapping_kb": {k: mapping.get(k) for k in
                                       ("Size", "Rss", "Anonymous", "Private_Dirty")}, "page_cache_source": cache["source"],
                  "read_ahead_kb": host.read_ahead_kb(image),
                  "total_kb": (anon_kb or 0) + cache["bytes"] // KIB},
         "qemu_rc": rec.get("rc")}
    log(f"[{mode} #{rnd}] launch {launch_s:.1f} s + close {close_s:.1f} s; free -m buff/cache "
        f"{r['guest']['free_m']['buff_cache']} MiB; QEMU maxrss "
        f"{(rec.get('ru_maxrss_kb') or 0) / KIB:.1f} MiB, anon {(anon_kb or 0) / KIB:.1f}, "
        f"image cache {cache['bytes'] / MIB:.1f}; daxprobe {r['guest']['daxprobe']['verdict']}")
    return r


# (key, label, unit, getter): the compared figures, in the table's order.
FIGURES = [
    ("launch_close_s", "launch + close (boot-benchmark)", "s", lambda r: r["launch_close_s"]),
    ("buff_cache", "guest `free -m` buff/cache", "MiB",
     lambda r: r["guest"]["free_m"]["buff_cache"]),
    ("guest_used", "guest `free -m` used", "MiB", lambda r: r["guest"]["free_m"]["used"]),
    ("mem_total", "guest MemTotal", "MiB", lambda r: r["guest"]["meminfo_kb"]["MemTotal"] / KIB),
    ("qemu_maxrss", "QEMU ru_maxrss", "MiB", lambda r: r["host"]["qemu_ru_maxrss_kb"] / KIB),
    ("qemu_anon", "QEMU anonymous memory", "MiB", lambda r: r["host"]["qemu_anonymous_kb"] / KIB),
    ("mapping_anon", "of it the guest's writes into its NVDIMM (QEMU's private copy)", "MiB",
     lambda r: (r["host"]["image_mapping_kb"].get("Anonymous") or 0) / KIB),
    ("image_cache", "host page cache of the image", "MiB",
     lambda r: r["host"]["image_page_cache_kb"] / KIB),
    ("host_total", "host total (anonymous + image cache)", "MiB",
     lambda r: r["host"]["total_kb"] / KIB),
]


def summarise(runs):
    """Per figure: each mode's median and every value, the median of the
    per-round ratios dax / stock."""
    out = {}
    rounds = sorted({r["round"] for r in runs})
    for key, label, unit, get in FIGURES:
        vals = {m: [get(r) for r in runs if r["mode"] == m] for m in MODES}
        ratios = []
        for i in rounds:
            s = [get(r) for r in runs if r["mode"] == "stock" and r["round"] == i]
            d = [get(r) for r in runs if r["mode"] == "dax" and r["round"] == i]
            if s and d and s[0]:
                ratios.append(d[0] / s[0])
        out[key] = {"label": label, "unit": unit,
                    "median": {m: round(statistics.median(v), 1) if v else None
                               for m, v in vals.items()},
                    "values": {m: [round(x, 1) for x in v] for m, v in vals.items()},
                    "ratio": round(statistics.median(ratios), 3) if ratios else None}
    dax = [r for r in runs if r["mode"] == "dax"]
    costs = dax[0]["guest"]["daxprobe"] if dax else {}
    out["daxprobe"] = {
        "verdicts": {m: sorted({r["guest"]["daxprobe"]["verdict"] for r in runs
                                if r["mode"] == m}) for m in MODES},
        "bounce_buffer": {m: sorted({(r["guest"]["daxprobe"]["bounce_buffer"] or {}).get("code")
                                     or "none" for r in runs if r["mode"] == m}) for m in MODES},
        "bounce_buffer_summary": (costs.get("bounce_buffer") or {}).get("summary"),
        "struct_pages_said": costs.get("struct_pages_said"),
        "namespaces": costs.get("namespaces")}
    return out


def readme_table(result):
    s = result["summary"]
    out = ["| MiB unless noted (median of " + str(result["rounds"]) + ") | stock (virtio-scsi) "
           "| root on fsdax NVDIMM, dax | dax / stock |", "|---|---|---|---|"]
    for key, label, unit, _ in FIGURES:
        f = s[key]
        lab = label + (f" [{unit}]" if unit != "MiB" else "")
        out.append(f"| {lab} | {f['median']['stock']} | {f['median']['dax']} | "
                   f"{'-' if f['ratio'] is None else f['ratio']} |")
    d = s["daxprobe"]
    ns = [n for n in d.get("namespaces") or [] if n.get("struct_pages_bytes")]
    sp = "; ".join(f"{n['dev']} {n['size'] / MIB:.0f} MiB map={n['map']}: "
                   f"{n['struct_pages_bytes'] / MIB:.0f} MiB" for n in ns) or "-"
    out.append(f"| daxprobe's verdict | {', '.join(d['verdicts']['stock'])} | "
               f"{', '.join(d['verdicts']['dax'])} | |")
    out.append(f"| daxprobe: bounce buffer | {', '.join(d['bounce_buffer']['stock'])} | "
               f"{', '.join(d['bounce_buffer']['dax'])} | |")
    out.append(f"| struct pages of the fsdax namespace (its size x 64/4096; daxprobe says: "
               f"{'yes' if d.get('struct_pages_said') else 'nothing'}) | - | {sp} | |")
    return out


def report(result):
    s = result["summary"]
    lines = [f"libguestfs {result['libguestfs']}, supermin {result['supermin']}, guest "
             f"{result['kernel']}, {result['rounds']} rounds interleaved, "
             f"{result['wall_seconds']} s, load {result['load']}"]
    for key, label, unit, _ in FIGURES:
        f = s[key]
        lines.append(f"  {label:40} stock {f['values']['stock']} dax {f['values']['dax']} "
                     f"{unit}; ratio {f['ratio']}")
    d = s["daxprobe"]
    lines.append(f"  daxprobe: verdicts {d['verdicts']}; bounce buffer {d['bounce_buffer']}: "
                 f"{d.get('bounce_buffer_summary')}")
    lines.append(f"  daxprobe on struct pages: {d.get('struct_pages_said') or 'nothing said'}")
    lines += ["", "README (the appliance comparison, libguestfs):", ""] + readme_table(result)
    return "\n".join(lines)


def headline(result):
    s = result["summary"]
    figs = []
    for key, label, unit, _ in FIGURES:
        f = s[key]
        if f["ratio"] is None:
            continue  # no floor in the stock launch
        figs.append(result_file.figure(f"libguestfs {label}, dax", unit, f["median"]["dax"],
                                       "stock, same rounds", f["median"]["stock"], f["ratio"],
                                       "value / floor (median of per-round ratios)"))
    return figs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("builddir", nargs="?", default=os.path.join(SOURCE_ROOT, "build"))
    ap.add_argument("--rounds", type=int, default=3, help="launches per mode (default 3)")
    ap.add_argument("--out", help="output folder (default BUILDDIR/libguestfs)")
    ap.add_argument("--timeout", type=float, default=600.0, help="bound on one guestfish call, s")
    ap.add_argument("--result", help="the result's name in bench/results (default libguestfs, "
                    "plus the --append words)")
    ap.add_argument("--results-dir", help="where NAME.json goes (default: bench/results)")
    ap.add_argument("--append", default="", metavar="ARGS",
                    help="more appliance kernel command line in both modes, e.g. swiotlb=noforce "
                    "(the wrapper's DAXPROBE_GUESTFS_APPEND); the result is then NAME-ARGS")
    ap.add_argument("--from", dest="from_json", metavar="RESULT_JSON",
                    help="no launches: print a stored result again")
    args = ap.parse_args()
    if args.from_json:
        print(report(json.load(open(args.from_json))))
        return 0
    builddir = os.path.abspath(args.builddir)
    suffix = "".join("-" + re.sub(r"[^a-z0-9]+", "-", a.lower()).strip("-")
                     for a in args.append.split())
    out = os.path.abspath(args.out or os.path.join(builddir, "libguestfs" + suffix))
    os.environ["DAXPROBE_GUESTFS_APPEND"] = args.append
    os.makedirs(out, exist_ok=True)
    t0 = time.monotonic()
    try:
        info = appliance_info(os.path.join(builddir, "tests", "vm"))
        runs = []
        for i in range(args.rounds):
            for mode in (MODES if i % 2 == 0 else MODES[::-1]):
                runs.append(one_launch(info, mode, i, out, args.timeout))
    except Skip as e:
        log(f"SKIP: {e}")
        return 77
    except (TestBedError, GuestError, OSError, ValueError) as e:
        log(f"FAIL: {e}")
        return 1
    result = {"schema": "daxprobe.libguestfs/1", "libguestfs": info["libguestfs"],
              "supermin": info["supermin"], "kernel": info["kernel"], "rounds": args.rounds,
              "root": info["root"], "nvdimm": {k: v for k, v in info["nvdimm"].items()
                                               if k != "path"},
              "kernel_cmdline_extra": args.append,
              "wall_seconds": round(time.monotonic() - t0, 1),
              "load": f"{os.getloadavg()[0]:.1f}", "runs": runs, "summary": summarise(runs)}
    with open(os.path.join(out, "result.json"), "w") as f:
        json.dump(result, f, indent=1)
    appended = f", kernel command line + {args.append}" if args.append else ""
    result_file.write(args.result or "libguestfs" + suffix, headline(result), results_dir=args.results_dir,
                      conditions=f"libguestfs {info['libguestfs']}, guest {info['kernel']} under "
                      f"TCG, {args.rounds} interleaved rounds{appended}, "
                      f"{result['wall_seconds']} s, load {result['load']} at the end")
    print(report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
