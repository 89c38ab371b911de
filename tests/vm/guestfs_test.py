#!/usr/bin/env python3
"""daxprobe inside libguestfs's real appliance, without and with DAX (issue
44, item 7; tests/vm/README.md, "libguestfs's appliance").

Two launches of Debian 12's libguestfs with the appliance supermin built
with daxprobe in it (harness/guestfs_appliance.py), each as its users run
it (`guestfish -a /dev/null run`, then `debug sh "daxprobe check --json"`):

- stock: libguestfs's own command line, the root a virtio-scsi disk. No
  NFIT: daxprobe must say `no_nfit`.
- dax: the root moved to an fsdax NVDIMM by the QEMU wrapper
  (tests/vm/guestfs_hv.py), supermin's init mounting `root=/dev/pmem0` with
  `dax`: daxprobe must say `dax_verified`, and tie `/` to pmem0.

The expected values are the kernel's, read in the same launch without
daxprobe's code: mountinfo's `/` (its major:minor through /sys/dev/block,
its super options), /sys/block/DEV/queue/dax, statx's DAX attribute of a
file on `/` (the test bed's kernel-answers), and /proc/meminfo's Cached
across a read of a cold file (DAX reads add nothing to the page cache).

Exit codes: 0 pass, 1 fail (also a test bed failure: the appliance could
not be built), 77 skip ("SKIP: ..."), 99 harness error.
"""

import argparse
import json
import os
import shutil
import sys
import time

from harness.guest import GuestError, Skip, TestBedError
from harness.guestfs_appliance import KERNEL_ANSWERS
from harness.guestfs_session import Launch, appliance_info

# A cold read of the largest file under /usr: its size, Cached before and
# after (kB), drop_caches first so the virtio-scsi root reads it from disk.
# (The appliance has no awk: Debian's gawk without its alternatives link.)
CACHED_READ = r"""f=$(find /usr -xdev -type f -size +1M -printf '%s %p\n' | sort -n | tail -1 | cut -d' ' -f2-)
sync; echo 3 > /proc/sys/vm/drop_caches
b=$(sed -n 's/^Cached: *\([0-9]*\).*/\1/p' /proc/meminfo); cat "$f" > /dev/null
a=$(sed -n 's/^Cached: *\([0-9]*\).*/\1/p' /proc/meminfo); echo "$(stat -c %s "$f") $b $a $f"
"""


def log(msg):
    print(msg, flush=True)


def root_mount(mountinfo):
    """mountinfo's line for `/`: {majmin, super_options, source, fstype}."""
    for line in mountinfo.splitlines():
        f = line.split()
        if len(f) > 6 and f[4] == "/":
            sep = f.index("-")
            return {"majmin": f[2], "fstype": f[sep + 1], "source": f[sep + 2],
                    "super_options": f[sep + 3].split(",")}
    return None


def kernel_answers(g):
    """What the appliance's kernel says, asked without daxprobe."""
    k = {"mountinfo": g.sh("cat /proc/self/mountinfo")}
    k["root"] = root_mount(k["mountinfo"])
    if k["root"]:
        k["root_dev"] = g.sh(f"basename $(readlink -f /sys/dev/block/{k['root']['majmin']})")
        k["queue_dax"] = g.sh(f"cat /sys/block/{k['root_dev']}/queue/dax 2>/dev/null || "
                              "echo none")
    k["nd_devices"] = g.sh("ls /sys/bus/nd/devices 2>/dev/null; true").split()
    k["nfit_table"] = g.sh("test -e /sys/firmware/acpi/tables/NFIT && echo yes || echo no")
    k["statx"] = g.sh(f"{KERNEL_ANSWERS} --statx /usr/bin/daxprobe /init; true")
    got = g.script(CACHED_READ)
    try:
        size, before, after, path = got.splitlines()[-1].split(" ", 3)
    except (ValueError, IndexError):
        raise GuestError(f"the cached-read script said {got!r}")
    k["cached_read"] = {"file": path, "size_kb": int(size) // 1024,
                        "cached_growth_kb": int(after) - int(before)}
    k["free_m"] = g.sh("free -m")
    return k


def daxprobe_check(g):
    rc = int(g.sh("daxprobe check --json > /tmp/check.json 2> /tmp/check.err; echo $?"))
    doc = g.sh("cat /tmp/check.json")
    err = g.sh("cat /tmp/check.err")
    text = g.sh("daxprobe check --no-active 2>&1; true")
    try:
        check = json.loads(doc)
    except ValueError as e:
        check = None
        err = f"not JSON ({e}): {doc[:500]!r}\n{err}"
    return {"rc": rc, "json": check, "stderr": err, "text": text}


def one_launch(info, mode, out_dir):
    t0 = time.monotonic()
    with Launch(info, mode, out_dir, verbose=True) as g:
        launch_s = g.launch()
        k = kernel_answers(g)
        d = daxprobe_check(g)
        close_s = g.close()
        rec = g.record() or {}
        run_dir = g.dir
    wall = time.monotonic() - t0
    log(f"{mode}: launch {launch_s:.1f} s, close {close_s:.1f} s, the whole launch with its "
        f"commands {wall:.1f} s; QEMU ru_maxrss {rec.get('ru_maxrss_kb')} kB; "
        f"logs in {run_dir}")
    with open(os.path.join(run_dir, "results.json"), "w") as f:
        json.dump({"kernel": k, "daxprobe": d, "launch_s": launch_s, "close_s": close_s,
                   "wall_s": round(wall, 1), "qemu": rec}, f, indent=1)
    return k, d


def root_entry(check):
    ms = [m for m in (check or {}).get("mounts") or [] if m.get("mount_point") == "/"]
    return ms[0] if len(ms) == 1 else None


def verdict_code(check):
    v = (check or {}).get("verdict")
    return v.get("code") if isinstance(v, dict) else v


def blockdev_name(v):
    return os.path.basename(v) if isinstance(v, str) else v


def check_stock(k, d, _info=None):
    fails = []
    c = d["json"] or {}
    if verdict_code(c) != "no_nfit":
        fails.append(f"verdict {verdict_code(c)!r}, want no_nfit (a virtio-scsi root, no NFIT)")
    if c.get("exit_code") != d["rc"]:
        fails.append(f"JSON exit_code {c.get('exit_code')} but daxprobe exited {d['rc']}")
    # The kernel's side: this is the appliance as libguestfs boots it.
    if k["nfit_table"] != "no" or k["nd_devices"]:
        fails.append(f"the kernel has an NFIT ({k['nfit_table']}) or nd devices "
                     f"{k['nd_devices']}: not the stock appliance")
    r = k["root"] or {}
    if not k.get("root_dev", "").startswith("sd"):
        fails.append(f"/ is on {k.get('root_dev')!r} ({r.get('majmin')}), want a virtio-scsi sdX")
    if "dax" in r.get("super_options", []) or any(o.startswith("dax=") for o in
                                                   r.get("super_options", [])):
        fails.append(f"mountinfo's / has {r.get('super_options')}: dax on a virtio-scsi root")
    if "statx_dax=0 /usr/bin/daxprobe" not in k["statx"]:
        fails.append(f"statx: {k['statx']!r}, want statx_dax=0 for /usr/bin/daxprobe")
    cr = k["cached_read"]
    if cr["cached_growth_kb"] < cr["size_kb"] // 2:
        fails.append(f"reading {cr['file']} ({cr['size_kb']} kB) added {cr['cached_growth_kb']} "
                     "kB to Cached: a page-cache root should add about its size")
    m = root_entry(c)
    if m and m.get("blockdev") and blockdev_name(m["blockdev"]) != k.get("root_dev"):
        fails.append(f"daxprobe ties / to {m['blockdev']!r}, the kernel to {k.get('root_dev')} "
                     f"({r.get('majmin')})")
    return fails


def check_dax(k, d, info):
    fails = []
    c = d["json"] or {}
    if verdict_code(c) != "dax_verified":
        fails.append(f"verdict {verdict_code(c)!r}, want dax_verified (/ on fsdax pmem0 with "
                     "dax)")
    if d["rc"] != 0 or c.get("exit_code") != 0:
        fails.append(f"daxprobe exited {d['rc']} (JSON exit_code {c.get('exit_code')}), want 0")
    r = k["root"] or {}
    # The kernel's answers first: if these fail, the appliance is not what
    # this test sets up (the wrapper or supermin changed), whatever daxprobe says.
    if k.get("root_dev") != "pmem0":
        fails.append(f"the kernel has / on {k.get('root_dev')!r} ({r.get('majmin')}), want pmem0")
    if "dax" not in r.get("super_options", []) and "dax=always" not in r.get("super_options", []):
        fails.append(f"mountinfo's / has {r.get('super_options')}: no dax")
    if k.get("queue_dax") != "1":
        fails.append(f"/sys/block/{k.get('root_dev')}/queue/dax is {k.get('queue_dax')!r}")
    if "statx_dax=1 /usr/bin/daxprobe" not in k["statx"]:
        fails.append(f"statx: {k['statx']!r}, want statx_dax=1 for /usr/bin/daxprobe")
    cr = k["cached_read"]
    if cr["cached_growth_kb"] > max(cr["size_kb"] // 10, 256):
        fails.append(f"reading {cr['file']} ({cr['size_kb']} kB) added {cr['cached_growth_kb']} "
                     "kB to Cached on a DAX root")
    # daxprobe against them: / tied to the device the kernel names by major:minor.
    m = root_entry(c)
    if not m:
        fails.append(f"daxprobe lists no mount for / (mounts: "
                     f"{[x.get('mount_point') for x in c.get('mounts') or []]})")
    else:
        if blockdev_name(m.get("blockdev")) != k.get("root_dev"):
            fails.append(f"daxprobe ties / (source {m.get('source')!r}) to blockdev "
                         f"{m.get('blockdev')!r}, the kernel's mountinfo to {k.get('root_dev')} "
                         f"({r.get('majmin')})")
        if m.get("queue_dax") is not True:
            fails.append(f"daxprobe's / queue_dax {m.get('queue_dax')!r}, the kernel says "
                         f"{k.get('queue_dax')}")
        sd = m.get("statx_dax") or {}
        if sd.get("dax") is not True:
            fails.append(f"daxprobe's / statx_dax {sd!r}, the kernel says {k['statx']!r}")
    ns = [n for n in c.get("namespaces") or [] if blockdev_name(n.get("blockdev")) == "pmem0"]
    want = info["nvdimm"]
    if len(ns) != 1 or ns[0].get("mode") != "fsdax" or ns[0].get("map") != want["map"]:
        fails.append(f"daxprobe's namespace of pmem0: {ns}, want fsdax map={want['map']} "
                     "(ndctl write-infoblock's)")
    return fails


def check_nodax(k, d, info):
    """The root on the fsdax NVDIMM found by its UUID: mounted without dax
    (`--modes nodax`, by hand: the suite runs stock and dax)."""
    fails = []
    c = d["json"] or {}
    r = k["root"] or {}
    if k.get("root_dev") != "pmem0" or k.get("queue_dax") != "1":
        fails.append(f"the kernel has / on {k.get('root_dev')!r} (queue/dax "
                     f"{k.get('queue_dax')}), want pmem0 (1)")
    if any(o == "dax" or o.startswith("dax=") for o in r.get("super_options", [])):
        fails.append(f"mountinfo's / has {r.get('super_options')}: dax without root=/dev/pmemN")
    if "statx_dax=0 /usr/bin/daxprobe" not in k["statx"]:
        fails.append(f"statx: {k['statx']!r}, want statx_dax=0")
    m = root_entry(c)
    code = ((m or {}).get("verdict") or {}).get("code")
    if not m or blockdev_name(m.get("blockdev")) != "pmem0" or code != "dax_not_requested":
        fails.append(f"daxprobe's /: {m and {x: m.get(x) for x in ('source', 'blockdev')}}, "
                     f"verdict {code}, want pmem0 and dax_not_requested")
    if verdict_code(c) == "dax_verified":
        fails.append("overall verdict dax_verified for a pmem root without DAX")
    log(f"nodax: daxprobe's remedy for /: {((m or {}).get('verdict') or {}).get('remedy')!r}")
    return fails


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vm-dir", required=True, help="BUILD/tests/vm")
    ap.add_argument("--skip-reason")
    ap.add_argument("--modes", default="stock,dax")
    args = ap.parse_args()
    if args.skip_reason:
        log(f"SKIP: {args.skip_reason}")
        return 77
    out_dir = os.path.join(os.path.abspath(args.vm_dir), "runs", "guestfs")
    shutil.rmtree(out_dir, ignore_errors=True)  # the last run's logs only, as runs/<scenario>/
    os.makedirs(out_dir, exist_ok=True)
    try:
        info = appliance_info(args.vm_dir)
        log(f"appliance: {info['appliance']} (libguestfs {info['libguestfs']}, supermin "
            f"{info['supermin']}, kernel {info['kernel']}; root {info['root']['used'] >> 20} MiB "
            f"used; NVDIMM {info['nvdimm']['size'] >> 20} MiB, data at "
            f"{info['nvdimm']['dataoff'] >> 20} MiB)")
        fails = []
        for mode in args.modes.split(","):
            k, d = one_launch(info, mode, out_dir)
            c = d["json"] or {}
            log(f"{mode}: daxprobe exit {d['rc']}, verdict {verdict_code(c)}; kernel: / on "
                f"{k.get('root_dev')} ({(k['root'] or {}).get('majmin')}) "
                f"{(k['root'] or {}).get('super_options')}, queue/dax {k.get('queue_dax')}, "
                f"{k['statx'].splitlines()[0] if k['statx'] else ''}, Cached "
                f"+{k['cached_read']['cached_growth_kb']} kB reading "
                f"{k['cached_read']['size_kb']} kB")
            got = {"stock": lambda k, d: check_stock(k, d, info), "dax": lambda k, d: check_dax(k, d, info),
                   "nodax": lambda k, d: check_nodax(k, d, info)}[mode](k, d)
            if got:
                log(f"--- {mode}: daxprobe's text report ---\n{d['text']}\n--- stderr ---\n"
                    f"{d['stderr']}")
            fails += [f"{mode}: {f}" for f in got]
    except Skip as e:
        log(f"SKIP: {e}")
        return 77
    except TestBedError as e:
        log(f"FAIL: {e}")
        return 1
    except GuestError as e:
        log(f"FAIL: {e}")
        return 1
    for f in fails:
        log(f"FAIL: {f}")
    if not fails:
        log("PASS")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
