#!/usr/bin/env python3
"""The boot check (packaging/daxprobe-init-hook.sh) under each
daxprobe.mode=, with a stand-in daxprobe that prints a real guest's report
(tests/fixtures/*/expected.json) and exits with its code: what reaches the
kernel log, and whether the boot goes on. The initramfs-tools script and the
dracut hook are parsed by their shells (sh -n, bash -n)."""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path


def run_hook(hook, tmp, cmdline, fixture, rc, with_nd=True, bare_path=False):
    fake = Path(tmp) / "daxprobe"
    calls = Path(tmp) / "calls"
    if calls.exists():
        calls.unlink()
    fake.write_text(f"#!/bin/sh\necho \"$@\" >> {calls}\n/bin/cat {fixture}\nexit {rc}\n")
    fake.chmod(0o755)
    (Path(tmp) / "cmdline").write_text(cmdline + "\n")
    kmsg = Path(tmp) / "kmsg"
    kmsg.write_text("")
    sysfs = Path(tmp) / ("sys" if with_nd else "sys-empty")
    (sysfs / "bus" / "nd").mkdir(parents=True, exist_ok=True) if with_nd else sysfs.mkdir(exist_ok=True)
    env = dict(os.environ, DAXPROBE=str(fake), DAXPROBE_CMDLINE=str(Path(tmp) / "cmdline"),
               DAXPROBE_KMSG=str(kmsg), DAXPROBE_SYSFS=str(sysfs))
    if bare_path:
        # An initramfs without busybox (initramfs-tools without Recommends):
        # klibc's few tools, no sed, sort, tail or cat. Only mkdir here.
        bare = Path(tmp) / "bare-bin"
        bare.mkdir(exist_ok=True)
        if not (bare / "mkdir").exists():
            (bare / "mkdir").symlink_to("/bin/mkdir")
        env["PATH"] = str(bare)
    # /run/daxprobe is where the report is kept: a private one per run.
    r = subprocess.run(["/usr/bin/unshare", "--mount", "/bin/sh", "-c",
                        f"/bin/mount -t tmpfs tmpfs /run && exec /bin/sh {hook}"],
                       env=env, capture_output=True, text=True)
    return r.returncode, kmsg.read_text(), calls.exists()


def main():
    src = Path(sys.argv[1])
    hook = src / "packaging" / "daxprobe-init-hook.sh"
    if os.geteuid() != 0:
        print("SKIP: needs root (a private /run in a mount namespace)")
        sys.exit(77)
    fx = src / "tests" / "fixtures"
    dax, raw = fx / "fsdax-ext4" / "expected.json", fx / "raw-xfs" / "expected.json"
    for f, code in ((dax, "dax_verified"), (raw, "problems_found")):
        assert json.loads(f.read_text())["verdict"]["code"] == code, f
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        cases = [
            # cmdline, report, daxprobe's exit, want hook exit, ran, kmsg must contain
            ("quiet", dax, 0, 0, True, ["DAX verified (mode warn)"]),
            ("daxprobe.mode=warn", raw, 1, 0, True,
             ["PROBLEM: problems_found (mode warn)", "remedy: ndctl create-namespace -f -e namespace0.0 -m fsdax"]),
            ("daxprobe.mode=strict", raw, 1, 1, True,
             ["PROBLEM: problems_found (mode strict)", "remedy: umount /mnt/pmem;",
              "daxprobe.mode=strict: stopping the boot"]),
            ("daxprobe.mode=strict", dax, 0, 0, True, ["DAX verified (mode strict)"]),
            ("daxprobe.strict", raw, 1, 1, True, ["stopping the boot"]),
            ("daxprobe.mode=off", raw, 1, 0, False, []),
            ("daxprobe.mode=bogus", raw, 1, 0, True, ["(mode warn)"]),
            ("daxprobe.mode=strict", raw, 2, 1, True, ["the check failed (exit 2, mode strict)"]),
        ]
        for cmdline, report, rc, want, ran, needles in cases:
            got, kmsg, called = run_hook(hook, tmp, cmdline, report, rc)
            print(f"[{cmdline}] {report.parent.name} rc {rc} -> hook {got}, ran {called}\n{kmsg}")
            if got != want or called != ran:
                failures.append(f"{cmdline} / {report.parent.name}: exit {got} ran {called}, "
                                f"want exit {want} ran {ran}")
            for n in needles:
                if n not in kmsg:
                    failures.append(f"{cmdline} / {report.parent.name}: kernel log lacks {n!r}")
        # Shell built-ins only: the remedy must reach the log when strict mode
        # stops a boot whose initramfs has no sed or sort.
        got, kmsg, called = run_hook(hook, tmp, "daxprobe.mode=strict", raw, 1, bare_path=True)
        print(f"[strict, no sed/sort/cat] hook {got}\n{kmsg}")
        for n in ("PROBLEM: problems_found (mode strict)",
                  "remedy: ndctl create-namespace -f -e namespace0.0 -m fsdax",
                  "stopping the boot"):
            if n not in kmsg:
                failures.append(f"without sed/sort: kernel log lacks {n!r}")
        if got != 1:
            failures.append(f"without sed/sort: strict exit {got}, want 1")
        got, kmsg, called = run_hook(hook, tmp, "quiet", raw, 1, with_nd=False)
        if got != 0 or called or "nothing to check" not in kmsg:
            failures.append("warn mode without /sys/bus/nd should skip the check quietly")
        got, kmsg, called = run_hook(hook, tmp, "daxprobe.mode=strict", raw, 1, with_nd=False)
        if got != 1 or not called:
            failures.append("strict mode without /sys/bus/nd must still check (and stop)")

    for shell, path in (("sh", "packaging/initramfs-tools/hooks/daxprobe"),
                        ("sh", "packaging/initramfs-tools/scripts/local-bottom/daxprobe"),
                        ("bash", "packaging/dracut/90daxprobe/module-setup.sh"),
                        ("sh", "packaging/dracut/90daxprobe/daxprobe-check.sh")):
        r = subprocess.run([shell, "-n", str(src / path)], capture_output=True, text=True)
        if r.returncode != 0:
            failures.append(f"{path}: {r.stderr}")
    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
