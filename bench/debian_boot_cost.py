#!/usr/bin/env python3
"""What the boot check costs a real Debian guest: the same image booted with
the initramfs that has daxprobe's hook (initrd.img, daxprobe.mode=warn) and
with the one made before daxprobe was installed (initrd-nohook.img),
interleaved (ABBA...), one guest at a time. Times are the guest's own,
from systemd (CLOCK_MONOTONIC since the kernel started):
  root switched  = UserspaceTimestampMonotonic (systemd started in the real root)
  login target   = multi-user.target's ActiveEnterTimestampMonotonic
Reported per variant (median, min, max) and as ratios hook/no-hook of the
medians. The root is ext4 on virtio-blk and the NVDIMM a raw namespace: the
hook runs the whole check (and logs a problem in warn mode). Not a pmem root:
the initramfs made without daxprobe lacks libnvdimm (ndctl's modprobe.d
"install" line, which daxprobe's hook works around), so it cannot mount one.

  PYTHONPATH=tests/vm bench/debian_boot_cost.py --image-dir build/tests/vm/debian/debian12 --rounds 3

Under KVM: the same command with DAXPROBE_QEMU_ACCEL=kvm (systemd_guest.py
passes it to -accel); boots are then ~20x shorter and the ratio is what a
user pays, since the check's own cost (ms) does not shrink with TCG's.
"""

import argparse
import json
import os
import statistics
import sys
import time

import result_file
from harness.systemd_guest import SystemdGuest, image_inputs


def boot_once(image_dir, initrd, i):
    guest = SystemdGuest(image_dir, f"bootcost-{i}", root="disk", cmdline="daxprobe.mode=warn",
                         agent_port=False, initrd=initrd)
    t0 = time.monotonic()
    with guest as g:
        g.connect_shell(timeout=900)
        g.sh("systemctl is-system-running --wait", timeout=900)
        sysd = g.show("", "UserspaceTimestampMonotonic")
        mu = g.show("multi-user.target", "ActiveEnterTimestampMonotonic")
        _, hook = g.sh("dmesg | grep -c 'daxprobe:' || true")
    return {"initrd": initrd,
            "root_switched_s": int(sysd["UserspaceTimestampMonotonic"]) / 1e6,
            "login_target_s": int(mu["ActiveEnterTimestampMonotonic"]) / 1e6,
            "hook_lines": int(hook.strip() or 0),
            "wall_s": round(time.monotonic() - t0, 1)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--image-dir", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", help="write every boot's readings here (JSON)")
    ap.add_argument("--result", default="boot-cost", help="the result's name (bench/results)")
    ap.add_argument("--results-dir", help="where NAME.json goes (default: bench/results)")
    args = ap.parse_args()
    info = image_inputs(args.image_dir)
    variants = {"hook": "initrd.img", "no-hook": "initrd-nohook.img"}
    runs = {k: [] for k in variants}
    for r in range(args.rounds):
        order = list(variants) if r % 2 == 0 else list(reversed(variants))
        for k in order:
            res = boot_once(args.image_dir, variants[k], f"{r}-{k}")
            runs[k].append(res)
            print(f"round {r} {k:8} root switched {res['root_switched_s']:6.2f} s, "
                  f"login target {res['login_target_s']:6.2f} s, daxprobe lines "
                  f"{res['hook_lines']}, wall {res['wall_s']} s", flush=True)
    if any(x["hook_lines"] == 0 for x in runs["hook"]) or \
            any(x["hook_lines"] for x in runs["no-hook"]):
        print("the hook did not run where it should (or ran where it should not)")
        return 1
    summary, figures = {}, []
    for metric, what in (("root_switched_s", "kernel start -> root switched"),
                         ("login_target_s", "kernel start -> multi-user.target")):
        med = {k: statistics.median(x[metric] for x in v) for k, v in runs.items()}
        summary[metric] = {"hook": med["hook"], "no_hook": med["no-hook"],
                           "ratio": round(med["hook"] / med["no-hook"], 3),
                           "hook_range": [min(x[metric] for x in runs["hook"]),
                                          max(x[metric] for x in runs["hook"])],
                           "no_hook_range": [min(x[metric] for x in runs["no-hook"]),
                                             max(x[metric] for x in runs["no-hook"])]}
        s = summary[metric]
        print(f"{metric}: hook {s['hook']:.2f} s {s['hook_range']}, no hook "
              f"{s['no_hook']:.2f} s {s['no_hook_range']}, ratio {s['ratio']}")
        figures.append(result_file.figure(
            f"{what}, with the hook", "s", round(s["hook"], 2),
            "the same image's initramfs made without daxprobe", round(s["no_hook"], 2),
            s["ratio"], "value / floor, medians (ABBA rounds)"))
    result_file.write(args.result, figures, results_dir=args.results_dir,
                      conditions=f"{args.rounds} rounds, one guest at a time, "
                      f"{os.environ.get('DAXPROBE_QEMU_ACCEL', 'tcg')}, load "
                      f"{os.getloadavg()[0]:.1f}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"image": info, "rounds": args.rounds, "runs": runs, "summary": summary},
                      f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
