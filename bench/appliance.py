#!/usr/bin/env python3
"""The appliance comparison: what DAX saves and costs, on both sides of the VM.

  PYTHONPATH=tests/vm bench/appliance.py [BUILDDIR] [--runs N] [--variants blk,nvdimm,...] [--out DIR]

Boots the same small appliance (a root filesystem of real Debian programs and
libraries, bench/appliance_image.py) N times in each variant:
  blk          root on virtio-blk (the usual way)
  nvdimm       root on an NVDIMM fsdax namespace, ext4 without dax
  nvdimm-dax   the same with -o dax
  virtio-pmem  root on virtio-pmem, ext4 -o dax
Each boot runs the fixed workload from the root under `daxprobe profile`, then
`daxprobe agent` reports over org.daxprobe.agent.0; the host samples QEMU's
memory and the page cache of the images, then tells the guest to shut down.
Writes DIR/result.json, DIR/appliance.svg and prints the table
(appliance_report.py). --check asserts what must hold whatever the timing (the
meson test 'appliance'). Exit 0, 1 (a boot or a check failed), 77 (cannot run
here: the reason is printed).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

import appliance_host as host
import appliance_image as image
import appliance_parse as parse
import appliance_report as report
import appliance_stats as stats
import result_file
from harness import images, mkinitramfs, pmem_file
from harness.guest import Guest, GuestError, Skip

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_ROOT = os.path.dirname(os.path.dirname(HERE))
PMEM_SIZE = "256M"
# initcall_debug: module init times in the kernel log (the nvdimm cost);
# a bigger log buffer so the early lines survive it.
CMDLINE = "initcall_debug log_buf_len=4M"
DEVICE = {"blk": "blk", "nvdimm": "nvdimm", "nvdimm-dax": "nvdimm", "virtio-pmem": "virtio-pmem"}


def log(msg):
    print(msg, flush=True)


def prepare(info, default_initrd, deb, out, variants, timeout, pmem_map=None):
    """The root image and, per pmem kind, a backing file holding an fsdax
    namespace with a copy of it (one setup guest each); cached under
    out/cache/KEY until an input changes. pmem_map: {kind: where the namespace
    keeps its struct pages} (ndctl --map; dev when not given)."""
    pmem_map = pmem_map or {}
    key = image.input_key(info, deb) + "".join(f"-{k}-map-{m}" for k, m in sorted(pmem_map.items())
                                               if m != "dev")
    cache = os.path.join(out, "cache", key)
    meta_path = os.path.join(cache, "images.json")
    meta = image.load_json(meta_path) or {}
    os.makedirs(cache, exist_ok=True)
    if "root" not in meta:
        root_dir = os.path.join(cache, "rootfs")
        payload = image.build_root(root_dir)
        size = image.make_ext4(root_dir, os.path.join(cache, "root.img"), payload["bytes"])
        shutil.rmtree(root_dir)
        meta = {"root": {"path": os.path.join(cache, "root.img"), "size": size, **payload}}
        log(f"appliance root: {payload['files']} files, {payload['bytes'] / 1e6:.1f} MB "
            f"payload ({len(payload['programs'])} programs), ext4 image {size >> 20} MiB"
            + (f"; not on this host: {', '.join(payload['missing'])}" if payload["missing"] else ""))
    for kind in sorted({DEVICE[v] for v in variants} - {"blk"}):
        if kind in meta:
            continue
        path = os.path.join(cache, f"{kind}.img")
        setup_pmem(info, default_initrd, kind, meta["root"]["path"], path,
                   pmem_map.get(kind, "dev"), timeout)
        meta[kind] = {"path": path, "pfn": pmem_file.pfn_info(path)}
    with open(meta_path, "w") as f:
        json.dump(meta, f, indent=1)
    return meta


def setup_pmem(info, initrd, kind, root_img, dest, pmem_map, timeout):
    t0 = time.monotonic()
    g = Guest(info["vmlinux"], initrd, "appliance-setup", nvdimm=(kind == "nvdimm"),
              virtio_pmem=(kind == "virtio-pmem"), nvdimm_size=PMEM_SIZE, disk=root_img,
              extra_cmdline=f"daxprobe.variant={kind} daxprobe.map={pmem_map}")
    with g:
        g.wait(timeout)
        files = g.results()
        if "setup.ok" not in files:
            raise GuestError(f"{kind} setup failed: {files.get('error.txt', b'').decode()}"
                             f"\n{files.get('commands.log', b'').decode()[-3000:]}")
        subprocess.run(["cp", "--sparse=always", g.nvdimm_path, dest + ".tmp"], check=True)
    pfn = pmem_file.pfn_info(dest + ".tmp")
    if not pfn or pfn["map"] != pmem_map:
        os.unlink(dest + ".tmp")
        raise RuntimeError(f"{kind} setup made {pfn} instead of an fsdax namespace with "
                           f"map={pmem_map} (a setup initramfs older than appliance-setup.sh? "
                           f"meson compile -C BUILDDIR guest-initramfs)")
    os.replace(dest + ".tmp", dest)
    log(f"prepared {kind} backing file (fsdax namespace + root image) in "
        f"{time.monotonic() - t0:.1f} s: {files['setup.ok'].decode().strip()}")


def copy_cold(src, dest):
    """A per-boot copy (sparse: the pmem files are mostly holes), written
    back and dropped from the host page cache so every boot starts cold."""
    subprocess.run(["cp", "--sparse=always", "--reflink=auto", src, dest], check=True)
    host.drop_cache(dest)


def first_report(sock, deadline):
    """Read the agent's lines until its first report event; returns its data."""
    buf = b""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise GuestError("no report from the agent in time")
        sock.settimeout(left)
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            raise GuestError("no report from the agent in time") from None
        if not chunk:
            raise GuestError("agent socket closed before a report")
        buf += chunk.replace(b"\xff", b"")
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if isinstance(msg, dict) and msg.get("event") == "report":
                return msg.get("data") or {}


def boot(info, initrds, meta, variant, index, out, timeout, append=""):
    kind = DEVICE[variant]
    g = Guest(info["vmlinux"], initrds[kind]["path"], "appliance", nvdimm=(kind == "nvdimm"),
              virtio_pmem=(kind == "virtio-pmem"), nvdimm_size=PMEM_SIZE,
              extra_cmdline=f"daxprobe.variant={variant} {CMDLINE} {append}".strip(), keep=True)
    if kind == "blk":
        g.disk = os.path.join(g.dir, "root.img")
        copy_cold(meta["root"]["path"], g.disk)
        images = {"root.img": g.disk}
    else:
        copy_cold(meta[kind]["path"], g.nvdimm_path)
        images = {f"{kind}.img": g.nvdimm_path}
    run_dir = os.path.join(out, "runs", f"{variant}-{index}")
    rec = {"variant": variant, "index": index}
    try:
        with g:
            deadline = g.t_start + timeout
            sock = g.connect_agent(timeout)
            with sock:
                data = first_report(sock, deadline)
                t_report = time.monotonic()
                pid = g.proc.pid
                rollup = host.smaps_rollup(pid)
                backing = host.smaps_of_files(pid, [p for p in images.values()
                                                    if p == g.nvdimm_path])
                cache = {name: host.page_cache(p) for name, p in images.items()}
                cache["initramfs"] = host.page_cache(g.initrd)
                cache["vmlinux"] = host.page_cache(g.vmlinux)
                t_shut = time.monotonic()
                g.tell_guest("shutdown", timeout=max(1.0, deadline - t_shut))
                g.wait(max(1.0, deadline - time.monotonic()))
            files = {k: v.decode(errors="replace") for k, v in g.results().items()}
            rec["host"] = {
                "first_report_s": t_report - g.t_start, "shutdown_s": g.t_exit - t_shut,
                "exit_s": g.t_exit - g.t_start,
                "qemu_peak_rss_kb": g.rusage.ru_maxrss if g.rusage else None,
                "qemu_rollup": rollup,
                "backing": {os.path.basename(k): v for k, v in backing.items()},
                "page_cache": cache, "images": list(images)}
            rec["guest"] = guest_record(files, initrds[kind], data)
            save_run(run_dir, g, files)
    except GuestError as e:
        save_run(run_dir, g, {})
        raise GuestError(f"{variant} run {index}: {e} (console: {run_dir}/console.log)")
    finally:
        shutil.rmtree(g.dir, ignore_errors=True)
    return rec


def guest_record(files, initrd, report_data):
    st = parse.steps(files.get("steps.log", ""))
    t0, t1 = parse.step_time(st, "root-modprobe "), parse.step_time(st, "root-device")
    mem = parse.kv_kb(files.get("meminfo-after-workload.txt", ""))
    return {
        "meminfo": {k: mem.get(k) for k in ("MemTotal", "MemFree", "MemAvailable", "Cached",
                                            "Buffers", "Shmem")},
        "workload": parse.workload_profile(files),
        "workload_log": files.get("workload.log", ""),
        "steps": st,
        "device_bringup_s": (t1 - t0) if t0 is not None and t1 is not None else None,
        "initcalls_us": parse.initcalls(files.get("dmesg.txt", ""), set(initrd["device_modules"])),
        "swiotlb_mb": parse.swiotlb_mb(files.get("dmesg.txt", "")),
        "queue_dax": files.get("queue-dax", "").strip() or None,
        "root_verdict": parse.root_mount_verdict(report_data),
        "error": files.get("error.txt") or None,
    }


def save_run(run_dir, g, files):
    if os.path.exists(run_dir):
        shutil.rmtree(run_dir)
    os.makedirs(os.path.join(run_dir, "results"))
    if os.path.exists(g.console_path):
        shutil.copy(g.console_path, run_dir)
    for rel, text in files.items():
        p = os.path.join(run_dir, "results", rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("builddir", nargs="?", default=os.path.join(SOURCE_ROOT, "build"))
    ap.add_argument("--runs", type=int, default=3, help="boots per variant (default 3)")
    ap.add_argument("--variants", default=",".join(stats.VARIANTS),
                    help=f"comma-separated, of {','.join(stats.VARIANTS)}")
    ap.add_argument("--out", help="output folder (default BUILDDIR/appliance)")
    ap.add_argument("--timeout", type=float, default=300.0, help="bound on one boot, s")
    ap.add_argument("--deb", help="the guest package daxprobe_*.deb the initramfs takes daxprobe "
                                  "from (default: the one in BUILDDIR/deb, meson target debs)")
    ap.add_argument("--append", default="", metavar="ARGS",
                    help="more guest kernel command line, e.g. swiotlb=noforce")
    ap.add_argument("--check", action="store_true", help="assert the invariants (meson test)")
    ap.add_argument("--skip-reason", help="skip with this reason (set by meson.build)")
    ap.add_argument("--result", help="the result's name in bench/results (default: appliance, "
                    "plus the --append words: appliance-swiotlb-noforce)")
    ap.add_argument("--results-dir", help="where NAME.json goes (default: bench/results)")
    ap.add_argument("--from", dest="from_json", metavar="RESULT_JSON",
                    help="no boots: recompute the summary of a stored result, print and plot it")
    args = ap.parse_args()
    if args.from_json:
        if not os.path.isfile(args.from_json):
            ap.error(f"--from: no such file {args.from_json}")
        return render(args.from_json, args.out or os.path.dirname(os.path.abspath(args.from_json)),
                      args.check)
    variants = [v for v in args.variants.split(",") if v]
    bad = [v for v in variants if v not in DEVICE]
    if bad or not variants or args.runs < 1:
        ap.error(f"unknown variant(s) {bad}; known: {', '.join(DEVICE)}" if bad
                 else "need at least one variant and --runs >= 1")
    builddir = os.path.abspath(args.builddir)
    out = os.path.abspath(args.out or os.path.join(builddir, "appliance"))
    inputs = guest_inputs(args, builddir)
    if isinstance(inputs, int):
        return inputs
    info, default_initrd, deb = inputs
    os.makedirs(out, exist_ok=True)
    t0 = time.monotonic()
    try:
        meta = prepare(info, default_initrd, deb, out, variants, args.timeout)
        initrds = image.build_initramfs(info, deb, out)
        runs = []
        for i in range(args.runs):  # rounds, so drift in the host's load hits every variant
            for v in variants:
                rec = boot(info, initrds, meta, v, i, out, args.timeout, args.append)
                h = rec["host"]
                log(f"[{v} #{i}] first report {h['first_report_s']:.1f} s, shutdown "
                    f"{h['shutdown_s']:.2f} s, workload via {rec['guest']['workload']['mode']}")
                runs.append(rec)
    except (GuestError, RuntimeError, OSError, ValueError, subprocess.CalledProcessError) as e:
        log(f"FAIL: {e}")
        return 1
    result = {"schema": "daxprobe.appliance/2", "kernel": info["version"],
              "runs_per_variant": args.runs, "variants": variants,
              "kernel_cmdline_extra": f"{CMDLINE} {args.append}".strip(),
              "wall_seconds": round(time.monotonic() - t0, 1),
              "root_image": {k: v for k, v in meta["root"].items() if k != "path"},
              "initramfs": {k: {kk: vv for kk, vv in v.items() if kk != "path"}
                            for k, v in initrds.items()},
              "runs": runs, "summary": stats.summarise(runs)}
    with open(os.path.join(out, "result.json"), "w") as f:
        json.dump(result, f, indent=1)
    name = args.result or "appliance" + "".join(
        "-" + re.sub(r"[^a-z0-9]+", "-", a.lower()).strip("-") for a in args.append.split())
    result_file.write(name, stats.headline(result["summary"]), results_dir=args.results_dir,
                      conditions=f"guest {info['version']} under TCG, {args.runs} boots per "
                      f"variant, {result['wall_seconds']} s, load {os.getloadavg()[0]:.1f}")
    return render(os.path.join(out, "result.json"), out, args.check)


def guest_inputs(args, builddir):
    """The guest kernel's info, the default initramfs and the guest package
    (args.deb or BUILDDIR/deb's); or the exit code: 77 (SKIP, the reason
    printed) or 1 (no guest package: a build error, not a skip)."""
    try:
        if args.skip_reason:
            raise Skip(args.skip_reason)
        info, default_initrd = images.guest_inputs(os.path.join(builddir, "tests", "vm"))
        if not shutil.which("mkfs.ext4"):
            raise Skip("mkfs.ext4 not found (e2fsprogs)")
        deb = args.deb or mkinitramfs.find_guest_deb(os.path.join(builddir, "deb"))
    except Skip as e:
        log(f"SKIP: {e}")
        return 77
    except RuntimeError as e:
        log(f"FAIL: {e}")
        return 1
    return info, default_initrd, deb


def render(result_path, out, check):
    """Table on stdout, DIR/appliance.svg; with check, the invariants."""
    return render_result(result_path, out, check, "appliance",
                         lambda result: stats.summarise(result["runs"]), report)


def render_result(result_path, out, check, name, summarise, renderer):
    """A stored result.json rendered by `renderer` (a module with table, svg
    and invariants): the table on stdout, DIR/NAME.svg; with check, the
    invariants, exit 1 if one fails."""
    with open(result_path) as f:
        result = json.load(f)
    result["summary"] = summarise(result)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, f"{name}.svg"), "w") as f:
        f.write(renderer.svg(result))
    log(renderer.table(result))
    log(f"\n{result_path}, {out}/{name}.svg ({result['wall_seconds']} s of boots)")
    if check:
        failures = renderer.invariants(result)
        for msg in failures:
            log(f"FAIL: {msg}")
        return 1 if failures else 0
    return 0


if __name__ == "__main__":
    import signal
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sys.exit(main())
