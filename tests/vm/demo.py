#!/usr/bin/env python3
"""The daxprobe demo: boot a real guest with an emulated NVDIMM and show
daxprobe's report for it.

  tests/vm/demo.py [BUILDDIR]      (default: build)

Builds what it needs (packaging/build-tree.sh: meson setup with the package
build's flags if BUILDDIR does not exist, then daxprobe, the collector, the
guest kernel and an initramfs with daxprobe from the build tree; the test
suite's guests take it from the .deb instead, whose compile is then ccache
hits), then boots Debian's kernel under QEMU/TCG twice (~6-10 s each):
  1. fsdax namespace, ext4 mounted -o dax: DAX is really in effect;
  2. raw namespace, XFS mounted -o dax=always: the mount "works" but the
     kernel silently turned DAX off. This is the case daxprobe exists for.
Prints daxprobe's human-readable report (`daxprobe check`) from inside each
guest. Then a third guest runs `daxprobe agent`, which reports over
virtio-serial to `daxprobe-collector` on the host (stopped and restarted
midway); the demo shows the collector storing the reports and its `query`.
Exit 0 when both guests ran and daxprobe answered as expected (0, 1), 77
when the test bed cannot run here (the reason is printed), 1 otherwise.
"""

import os
import subprocess
import sys

import scenarios
from harness.guest import Guest, GuestError, Skip, TestBedError
from harness.images import guest_inputs

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_ROOT = os.path.dirname(os.path.dirname(HERE))

SHOW = [
    ("fsdax-ext4", 0,
     "fsdax namespace (ndctl create-namespace -m fsdax), ext4 mounted -o dax"),
    ("raw-xfs", 1,
     "raw namespace (no labels, never configured), XFS mounted -o dax=always: "
     "the mount succeeds, but..."),
]


def say(msg=""):
    print(msg, flush=True)


def build(builddir):
    # Configured and compiled as the package build compiles (build-tree.sh):
    # the suite's package build (README line 2) is then ccache hits.
    say(f"== building daxprobe and the guest image in {builddir} "
        f"(first time: downloads Debian's kernel package, ~70 MB)")
    subprocess.run([os.path.join(SOURCE_ROOT, "packaging", "build-tree.sh"), builddir,
                    "guest-initramfs-demo", "daxprobe-collector", "daxprobe-collector-run"],
                   check=True)


def main():
    builddir = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(SOURCE_ROOT, "build"))
    try:
        build(builddir)
        vm_dir = os.path.join(builddir, "tests", "vm")
        info, initrd = guest_inputs(vm_dir, image="initramfs-demo.cpio")
    except subprocess.CalledProcessError as e:
        say(f"build failed: {e}")
        return 1
    except Skip as e:
        say(f"cannot run the demo here: {e}")
        return 77
    except TestBedError as e:
        say(str(e))
        return 1

    ok = True
    total = len(SHOW) + 1
    for i, (name, want_rc, what) in enumerate(SHOW, 1):
        sc = scenarios.SCENARIOS[name]
        say()
        say(f"== [{i}/{total}] Debian {info['version']} under QEMU with an emulated 512 MiB NVDIMM")
        say(f"   {what}")
        guest = Guest(info["vmlinux"], initrd, name, nvdimm=sc.nvdimm,
                      label_size=sc.label_size, human=True)
        try:
            with guest:
                guest.wait(240)
                files = guest.results()
        except (GuestError, Skip) as e:
            say(f"   the guest failed: {e}")
            say(guest.console_text()[-3000:])
            ok = False
            continue
        res = scenarios.Results(files)
        say(f"   (guest booted, prepared and checked in {guest.t_done - guest.t_start:.1f} s)")
        mount = res.kv("mount.txt")
        if mount:
            say(f"   $ mount -t {mount.get('fstype')} -o {mount.get('opts')} "
                f"{mount.get('dev')} /mnt/pmem   -> exit {mount.get('rc')}")
        say("   $ daxprobe check")
        say()
        say(res.text("check.txt", "(no report)").rstrip())
        rc = res.rc("check-human.rc")
        say()
        say(f"   daxprobe exit code: {rc} (0 = DAX verified, 1 = a problem found, 2 = check failed)")
        if rc != want_rc:
            say(f"   expected exit code {want_rc} here")
            ok = False
    ok = show_collector(info, initrd, total) and ok
    return 0 if ok else 1


def show_collector(info, initrd, n):
    """The host's side: the guest's agent reports to daxprobe-collector."""
    name = "collector-reconnect"
    sc = scenarios.SCENARIOS[name]
    say()
    say(f"== [{n}/{n}] The host's view: `daxprobe agent` in the guest reports over virtio-serial")
    say("   (org.daxprobe.agent.0) to `daxprobe-collector` on the host. The collector is stopped")
    say("   after the first report and started again; the guest remounts without DAX meanwhile.")
    stored = []

    def log(line):
        if "stored report" in line or "connected" in line:
            stored.append("   " + line.split("] ", 4)[-1] if "] " in line else line)

    guest = Guest(info["vmlinux"], initrd, name, nvdimm=sc.nvdimm, label_size=sc.label_size)
    try:
        with guest:
            host_files = sc.host(guest, log)
            guest.wait(240)
            files = guest.results()
    except (GuestError, Skip, RuntimeError) as e:
        say(f"   the guest failed: {e}")
        say(guest.console_text()[-3000:])
        return False
    files.update({f"host/{k}": v if isinstance(v, bytes) else str(v).encode()
                  for k, v in host_files.items()})
    say("   collector log:")
    for line in stored:
        say(line)
    say()
    say("   $ daxprobe-collector query")
    say(files.get("host/query.txt", b"").decode().rstrip())
    say()
    say("   $ daxprobe-collector query --vm guest")
    say(files.get("host/history.txt", b"").decode().rstrip())
    c, _ = scenarios.run_checks(sc, files)
    if c.failures:
        say("   unexpected: " + "; ".join(c.failures))
        return False
    return True


if __name__ == "__main__":
    sys.exit(main())
