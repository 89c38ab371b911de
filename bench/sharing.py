#!/usr/bin/env python3
"""The sharing comparison: N guests booted at once from one read-only image.
When does DAX pay for the host?

  PYTHONPATH=tests/vm nice -n 10 bench/sharing.py [BUILDDIR] [--n 1,2,4,8] [--series S,...] [--out DIR]

The appliance of bench/appliance.py, booted N at a time (all QEMUs started
together) from ONE image that no guest can write:
  blk          root.img on virtio-blk, `-drive ...,readonly=on`: each guest
               reads it into its own page cache (QEMU's anonymous memory)
  nvdimm-dax   one pmem file holding an fsdax namespace (struct pages in guest
               RAM: ndctl --map=mem), `memory-backend-file,readonly=on` under
               `-device nvdimm,unarmed=on`, ext4 `-o ro,noload,dax`
  virtio-pmem  one pmem file (struct pages on the device: --map=dev; see
               PMEM_MAP) under `virtio-pmem-pci`, readonly=on, `-o ro,noload,dax`
  blk-ksm      blk with the host's KSM running (sharing_host.BENCH_SETTINGS):
               the reading waits for ksmd to settle and counts what the
               host holds (each QEMU's Pss_Anon: a merged page split among
               its sharers), with ksmd's CPU time and its counters
  virtiofs-auto, virtiofs-none
               the appliance's root folder shared by virtiofsd (one per
               guest, -o cache=auto|none), mounted `-t virtiofs -o ro`; guest
               RAM is a shared memfd (QEMU's RssShmem) and each virtiofsd's
               own anonymous memory counts with its QEMU; the folder's host
               page cache counts once
  nvdimm-erofs the root as EROFS (`mkfs.erofs -E noinline_data`) at the data
               offset of nvdimm-dax's fsdax namespace, `-o ro,dax`
A series is a variant plus an extra kernel command line: VARIANT+noforce adds
`swiotlb=noforce`. A point is (series, N): the image is dropped from the host
page cache, N guests boot, each runs the workload and its agent's first
report says it is done (the readiness line, on org.daxprobe.agent.0); with all
N ready the host reads every QEMU's smaps_rollup and the shared image's page
cache once, then shuts them down. Writes DIR/result.json (the environment,
every point's raw readings and the summary: host total per N, break-even N),
DIR/sharing.svg and prints the table (sharing_report.py). Exit 0, 1 (a boot
or a check failed), 77 (cannot run here: the reason is printed).
"""

import argparse
import contextlib
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import time

import appliance
import appliance_host as host
import appliance_image as image
import appliance_parse as parse
import sharing_host
import sharing_report as report
import result_file
import sharing_stats as stats
from harness import pmem_file, virtiofsd
from harness.guest import Guest, GuestError, find_qemu

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_ROOT = os.path.dirname(os.path.dirname(HERE))
# variant -> (root device: the initramfs and the image, the guest's daxprobe.variant)
VARIANTS = {"blk": ("blk", "blk"), "nvdimm-dax": ("nvdimm", "nvdimm-dax"),
            "virtio-pmem": ("virtio-pmem", "virtio-pmem"), "blk-ksm": ("blk", "blk"),
            "virtiofs-auto": ("virtiofs", "virtiofs"), "virtiofs-none": ("virtiofs", "virtiofs"),
            "nvdimm-erofs": ("nvdimm-erofs", "nvdimm-erofs")}
DEFAULT_SERIES = ["blk", "nvdimm-dax", "virtio-pmem", "nvdimm-dax+noforce",
                  "virtio-pmem+noforce", "blk-ksm", "virtiofs-auto", "virtiofs-none",
                  "nvdimm-erofs", "nvdimm-erofs+noforce"]
KSM_SETTLE_S = 600  # bound on ksmd's two full scans after the last guest is ready
DEFAULT_MEMORY = "256M"
# Where each fsdax namespace keeps its struct pages (ndctl --map). mem: in
# guest RAM, so the guest writes nothing to the read-only device. virtio-pmem
# stays dev: `ndctl create-namespace -m fsdax --map=mem` on it (ndctl 76.1,
# 6.1) says fsdax but leaves no info block in the file (ext4 at offset 0).
PMEM_MAP = {"nvdimm": "mem", "virtio-pmem": "dev"}


def log(msg):
    print(msg, flush=True)


def parse_series(text):
    """"nvdimm-dax+noforce" -> (variant, extra kernel command line)."""
    variant, _, suffix = text.partition("+")
    if variant not in VARIANTS or suffix not in ("", "noforce"):
        raise ValueError(f"unknown series {text!r}: VARIANT or VARIANT+noforce, "
                         f"VARIANT one of {', '.join(VARIANTS)}")
    return variant, (stats.NOFORCE if suffix else "")


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def _read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def environment(info, memory, image_paths, series):
    """What the figures depend on besides the code: result.json and the
    table's header."""
    qemu = subprocess.run([find_qemu(), "--version"], capture_output=True, text=True,
                          check=True).stdout.splitlines()[0]
    with open("/proc/meminfo") as f:
        mem_total = host._kv_kb(f.readlines()).get("MemTotal")
    mm = "/sys/kernel/mm"
    return {"host_kernel": platform.release(), "qemu": qemu, "accel": "tcg",
            "host_cpus": os.cpu_count(), "host_memtotal_kb": mem_total,
            # QEMU asks for huge pages for guest RAM (2 MiB steps of anon
            # memory when THP allows it); KSM would merge the blk guests' copies.
            "thp_enabled": _read(f"{mm}/transparent_hugepage/enabled"),
            "ksm_run": _read(f"{mm}/ksm/run"),
            "ksm": ({"found": sharing_host.ksm_read(sharing_host.SETTINGS),
                     "blk-ksm": dict(sharing_host.ksm_read(sharing_host.SETTINGS),
                                     **sharing_host.BENCH_SETTINGS)}
                    if any(v == "blk-ksm" for v, _ in series.values()) else None),
            "virtiofsd": {name: virtiofsd_options(v) for name, (v, _) in series.items()
                          if VARIANTS[v][0] == "virtiofs"} or None,
            "loadavg_start": list(os.getloadavg()),
            "read_ahead_kb": {name: host.read_ahead_kb(p) for name, p in image_paths.items()},
            "guest_kernel": info["version"], "guest_memory": memory,
            "pmem_size": appliance.PMEM_SIZE, "niceness": os.nice(0),
            "pfn": {k: pmem_file.pfn_info(p) for k, p in image_paths.items()
                    if k not in ("root", "virtiofs")}}


def virtiofsd_options(variant):
    """virtiofsd's command line options for a virtio-fs series (harness/virtiofsd.py)."""
    return {"binary": virtiofsd.VIRTIOFSD, "cache": variant.split("-", 1)[1],
            "sandbox": "chroot", "one_daemon_per_guest": True}


class SharedRoot:
    """The one thing a series' guests boot from: an image file (blk, pmem) or
    virtiofsd's folder; what a guest needs of it and its host page cache."""

    def __init__(self, variant, path, ksm=None):
        self.kind, self.guest_variant = VARIANTS[variant]
        self.cache_mode = variant.split("-", 1)[1] if self.kind == "virtiofs" else None
        self.path, self.ksm = path, ksm
        self.folder = self.kind == "virtiofs"

    def guest_args(self):
        if self.folder:
            return {"nvdimm": False, "virtiofs_dir": self.path, "virtiofs_cache": self.cache_mode}
        return {"nvdimm": self.kind in ("nvdimm", "nvdimm-erofs"),
                "virtio_pmem": self.kind == "virtio-pmem",
                "disk": self.path if self.kind == "blk" else None, "shared_image": self.path}

    def drop_cache(self):
        (sharing_host.drop_tree if self.folder else host.drop_cache)(self.path)

    def mtime(self):
        return sharing_host.tree_mtime(self.path) if self.folder else os.stat(self.path).st_mtime_ns

    def page_cache(self):
        return (sharing_host.tree_page_cache if self.folder else host.page_cache)(self.path)

    def qemu_reading(self, g):
        """(smaps_rollup, the QEMU's mapping of the image, extra: memfd RAM and
        virtiofsd's own memory for virtio-fs)."""
        rollup = host.smaps_rollup(g.proc.pid)
        if self.folder:
            return rollup, {}, {"qemu_rss_shmem_kb": sharing_host.status_kb(g.proc.pid, "RssShmem"),
                                "virtiofsd_rollup": host.smaps_rollup(g.virtiofsd.proc.pid)}
        if self.kind == "blk":
            return rollup, {}, {}
        return rollup, host.smaps_of_files(g.proc.pid, [self.path]).get(self.path), {}


def boot_points(info, initrds, root, series, variant, append, ns, out, timeout, memory):
    """Guests from one image, booted in waves: up to each N of `ns` (sorted),
    the missing guests start at once; with that many ready the host takes
    its reading. ns=[N]: one point, N guests started together (the sweep);
    ns=[1, 2]: N=1's guest is also one of N=2's (--incremental: fewer boots).
    Returns one record per N."""
    initrd = initrds[root.kind]
    root.drop_cache()  # every boot set starts with the image cold on the host
    mtime = root.mtime()
    cmdline = (f"daxprobe.variant={root.guest_variant} daxprobe.ro=1 {appliance.CMDLINE} "
               f"{append}").strip()
    guests, reports, readings = [], [], []
    run_dir = os.path.join(out, "runs", f"{series}-n{'-'.join(map(str, ns))}")
    shutil.rmtree(run_dir, ignore_errors=True)
    with contextlib.ExitStack() as stack:
        try:
            for n in ns:
                wave = []
                for _ in range(n - len(guests)):
                    g = Guest(info["vmlinux"], initrd["path"], "appliance",
                              nvdimm_size=appliance.PMEM_SIZE, memory=memory,
                              extra_cmdline=cmdline, keep=True, **root.guest_args())
                    stack.callback(shutil.rmtree, g.dir, True)
                    stack.enter_context(g)
                    wave.append(g)
                # A wave runs at once: each guest's deadline counts from its own start.
                socks = [stack.enter_context(g.connect_agent(timeout)) for g in wave]
                for g, sock in zip(wave, socks):
                    data = appliance.first_report(sock, g.t_start + timeout)
                    reports.append((time.monotonic() - g.t_start, data))
                guests += wave
                readings.append(read_host(guests, root, info, initrd))
            for g in guests:
                g.tell_guest("shutdown", timeout=max(1.0, g.t_start + timeout - time.monotonic()))
            records = []
            for i, g in enumerate(guests):
                g.wait(max(1.0, g.t_start + timeout - time.monotonic()))
                files = {k: v.decode(errors="replace") for k, v in g.results().items()}
                appliance.save_run(os.path.join(run_dir, str(i)), g, files)
                records.append(guest_record(g, files, reports[i], initrd))
        except GuestError as e:  # keep the consoles before the run folders go
            for i, g in enumerate(guests):
                if not os.path.exists(os.path.join(run_dir, str(i))):
                    appliance.save_run(os.path.join(run_dir, str(i)), g, {})
            raise GuestError(f"{series} N={ns}: {e} (consoles: {run_dir}/)") from None
    unchanged = root.mtime() == mtime
    points = []
    for n, r in zip(ns, readings):
        guest_recs = [dict(rec, qemu_rollup=rollup, backing=backing, **extra)
                      for rec, (rollup, backing, extra) in zip(records, r["qemus"])]
        points.append({"series": series, "variant": variant, "append": append, "n": n,
                       "measured_after_s": r["t"] - guests[0].t_start, "loadavg": r["load"],
                       "image": os.path.basename(root.path), "image_unchanged": unchanged,
                       "shared_page_cache": r["shared"], "boot_files_page_cache": r["boot"],
                       "booted_with": ns, "guests": guest_recs,
                       **({"ksm": r["ksm"]} if "ksm" in r else {})})
    return points


def guest_record(g, files, report_at, initrd):
    t_report, data = report_at
    return {"first_report_s": t_report,
            "qemu_peak_rss_kb": g.rusage.ru_maxrss if g.rusage else None,
            "guest": appliance.guest_record(files, initrd, data),
            "block_ro": files.get("block-ro", "").strip() or None,
            "root_mount": files.get("root-mountinfo", "").strip() or None,
            "dma": parse.dma_facts(files)}


def read_host(guests, root, info, initrd):
    """The host's reading with these guests booted and their workload run:
    each QEMU's smaps_rollup (and its mapping of the image), the image's page
    cache once. Under KSM, first wait for ksmd to settle: two full scans
    after the last guest was ready."""
    ksm = None
    if root.ksm:
        scans = int(sharing_host.ksm_read(["full_scans"])["full_scans"])
        t_wait = time.monotonic()
        counters = sharing_host.ksm_settled(scans, t_wait + KSM_SETTLE_S)
        ksm = {"counters": counters, "full_scans_at_ready": scans,
               "settle_s": round(time.monotonic() - t_wait, 1),
               "ksmd_cpu_s": round(sharing_host.ksmd_cpu_s() - root.ksm.cpu0, 2),
               "settings": root.ksm.settings}
    t, load = time.monotonic(), list(os.getloadavg())
    qemus = [root.qemu_reading(g) for g in guests]
    out = {"t": t, "load": load, "qemus": qemus, "shared": root.page_cache(),
           "boot": {"vmlinux": host.page_cache(info["vmlinux"]),
                    "initramfs": host.page_cache(initrd["path"])}}
    if ksm:
        out["ksm"] = ksm
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("builddir", nargs="?", default=os.path.join(SOURCE_ROOT, "build"))
    ap.add_argument("--n", default="1,2,4,8", help="guest counts (default 1,2,4,8)")
    ap.add_argument("--series", default=",".join(DEFAULT_SERIES),
                    help=f"comma-separated VARIANT[+noforce], VARIANT of {','.join(VARIANTS)} "
                         f"(default {','.join(DEFAULT_SERIES)})")
    ap.add_argument("--memory", default=DEFAULT_MEMORY, help="guest RAM (default 256M)")
    ap.add_argument("--out", help="output folder (default BUILDDIR/sharing)")
    ap.add_argument("--timeout", type=float, default=240.0,
                    help="bound on one guest's boot + workload, times N, s (default 240)")
    ap.add_argument("--deb", help="the guest package (default: the one in BUILDDIR/deb)")
    ap.add_argument("--incremental", action="store_true",
                    help="boot each series' guests once, one N after another (N=1's guest "
                         "is one of N=2's): the test's way to a break-even in fewer boots")
    ap.add_argument("--check", action="store_true",
                    help="assert what must hold (every guest's root read-only, DAX where asked)")
    ap.add_argument("--skip-reason", help="skip with this reason (set by meson.build)")
    ap.add_argument("--result", default="sharing", help="the result's name in bench/results")
    ap.add_argument("--results-dir", help="where NAME.json goes (default: bench/results)")
    ap.add_argument("--from", dest="from_json", metavar="RESULT_JSON",
                    help="no boots: recompute the summary of a stored result, print and plot it")
    args = ap.parse_args()
    if args.from_json:
        if not os.path.isfile(args.from_json):
            ap.error(f"--from: no such file {args.from_json}")
        return render(args.from_json, args.out or os.path.dirname(os.path.abspath(args.from_json)),
                      args.check)
    try:
        ns = sorted({int(x) for x in args.n.split(",") if x})
        series = {s: parse_series(s) for s in args.series.split(",") if s}
    except ValueError as e:
        ap.error(str(e))
    if not ns or min(ns) < 1 or not series:
        ap.error("need at least one N >= 1 and one series")
    builddir = os.path.abspath(args.builddir)
    out = os.path.abspath(args.out or os.path.join(builddir, "sharing"))
    inputs = appliance.guest_inputs(args, builddir)
    if isinstance(inputs, int):
        return inputs
    info, default_initrd, deb = inputs
    os.makedirs(out, exist_ok=True)
    t0 = time.monotonic()
    kinds = sorted({VARIANTS[v][0] for v, _ in series.values()})
    if "blk-ksm" in {v for v, _ in series.values()} and (why := sharing_host.ksm_writable()):
        log(f"SKIP: the blk-ksm series needs KSM: {why}")
        return 77
    try:
        # appliance.prepare makes the ext4 root and the pmem files its variants need
        pmem = {"nvdimm": "nvdimm-dax", "nvdimm-erofs": "nvdimm-dax", "virtio-pmem": "virtio-pmem"}
        meta = appliance.prepare(info, default_initrd, deb, out,
                                 ["blk"] + [pmem[k] for k in kinds if k in pmem], args.timeout,
                                 pmem_map=PMEM_MAP)
        meta.update(prepare_shared(meta, kinds))
        initrds = image.build_initramfs(info, deb, out, devices=kinds)
        paths = {kind: m["path"] for kind, m in meta.items()}
        env = environment(info, args.memory, paths, series)
        # nvdimm-erofs carries nvdimm-dax's info block
        if any(p["map"] != PMEM_MAP["nvdimm" if k == "nvdimm-erofs" else k]
               for k, p in env["pfn"].items()):
            raise RuntimeError(f"pmem images not as asked ({PMEM_MAP}): {env['pfn']}")
        digests = {kind: sha256(p) for kind, p in paths.items() if kind != "virtiofs"}
        points = []
        # rounds: drift in the host's load hits every series; --incremental:
        # one round, each series' guests booted one N after another.
        for wave in ([ns] if args.incremental else [[n] for n in ns]):
            for name, (variant, append) in series.items():
                points += run_series(info, initrds, paths, name, variant, append, wave, out,
                                     args.timeout * max(wave), args.memory)
        env["loadavg_end"] = list(os.getloadavg())
        env["images_unchanged"] = {k: sha256(paths[k]) == d for k, d in digests.items()}
    except (GuestError, RuntimeError, OSError, ValueError, subprocess.CalledProcessError) as e:
        log(f"FAIL: {e}")
        return 1
    result = {"schema": "daxprobe.sharing/1", "environment": env, "ns": ns,
              "series": list(series), "kernel_cmdline_extra": appliance.CMDLINE,
              "wall_seconds": round(time.monotonic() - t0, 1),
              "root_image": {k: v for k, v in meta["root"].items() if k != "path"},
              "points": points}
    with open(os.path.join(out, "result.json"), "w") as f:
        json.dump(result, f, indent=1)
    result_file.write(args.result, stats.headline(stats.summarise(result)),
                      results_dir=args.results_dir,
                      conditions=f"guest {info['version']} under TCG, {args.memory} guests, "
                      f"{result['wall_seconds']} s, load {env['loadavg_end'][0]:.1f} at the end")
    return render(os.path.join(out, "result.json"), out, args.check)


def prepare_shared(meta, kinds):
    """What the newer series boot from, beside appliance.prepare's images in
    its cache folder: the root as a folder (virtiofsd's share, kept) and
    nvdimm-erofs's backing file: nvdimm-dax's fsdax info block (its first
    dataoff bytes) followed by the EROFS image of that folder."""
    cache = os.path.dirname(meta["root"]["path"])
    folder = os.path.join(cache, "rootfs-shared")
    out = {}
    if {"virtiofs", "nvdimm-erofs"} & set(kinds):
        if not os.path.isfile(os.path.join(folder, "appliance", "workload.sh")):
            image.build_root(folder)
        out["virtiofs"] = {"path": folder}
    if "nvdimm-erofs" in kinds:
        dest = os.path.join(cache, "nvdimm-erofs.img")
        if not os.path.exists(dest):
            erofs = os.path.join(cache, "root.erofs")
            size = image.make_erofs(folder, erofs)
            dataoff = pmem_file.pfn_info(meta["nvdimm"]["path"])["dataoff"]
            with open(meta["nvdimm"]["path"], "rb") as src, open(dest + ".tmp", "wb") as f:
                f.write(src.read(dataoff))
                with open(erofs, "rb") as e:
                    shutil.copyfileobj(e, f)
                f.truncate(os.path.getsize(meta["nvdimm"]["path"]))
            os.replace(dest + ".tmp", dest)
            log(f"nvdimm-erofs: EROFS image {size >> 20} MiB at data offset {dataoff}")
        out["nvdimm-erofs"] = {"path": dest, "pfn": pmem_file.pfn_info(dest)}
    return out


def run_series(info, initrds, paths, name, variant, append, wave, out, timeout, memory):
    """One series' points for this wave of N; KSM on around blk-ksm's boots."""
    kind = VARIANTS[variant][0]
    path = paths["root" if kind == "blk" else kind]
    with (sharing_host.KsmOn() if variant == "blk-ksm" else contextlib.nullcontext()) as ksm:
        points = boot_points(info, initrds, SharedRoot(variant, path, ksm), name, variant,
                             append, wave, out, timeout, memory)
    for p in points:
        t = stats.point_totals(p)
        log(f"[{name} N={p['n']}] host total {t['total_kb'] / 1024:.0f} MiB = QEMU "
            f"memory {t['anon_kb'] / 1024:.0f} + shared image cache "
            f"{t['cache_kb'] / 1024:.0f} (PSS sum {t['pss_kb'] / 1024:.0f}), "
            f"load {p['loadavg'][0]:.1f}")
    return points


def render(result_path, out, check):
    """Table on stdout, DIR/sharing.svg; with check, the invariants."""
    return appliance.render_result(result_path, out, check, "sharing", stats.summarise, report)


if __name__ == "__main__":
    import signal
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sys.exit(main())
