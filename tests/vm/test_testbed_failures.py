#!/usr/bin/env python3
"""A VM test whose test bed could not be built fails and names the step;
it skips (77) only for a fault of the machine, with "machine fault:" (the
only skip .ci/run accepts). Issue 30: six Debian tests skipped on a broken
fsdax template and line 2 looked green.

The real test programs (run_scenario.py, debian_guest_test.py,
guestfs_test.py) run on the records the build leaves when a step fails
(kernel.json, image.json, guestfs.json); no
VM is booted, since none could be."""

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FAILS = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        FAILS.append(what)


def run(*argv):
    p = subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout + p.stderr


def debian(tmp, record, want_rc, want_text, what):
    image = os.path.join(tmp, "debian12")
    os.makedirs(image, exist_ok=True)
    with open(os.path.join(image, "image.json"), "w") as f:
        json.dump(record, f)
    rc, out = run(os.path.join(HERE, "debian_guest_test.py"), "--image-dir", image,
                  "--scenario", "initramfs-strict")
    check(rc == want_rc and want_text in out, f"{what}: exit {rc}, {out.strip()[-200:]!r}")


def kernel(tmp, record, initrd, want_rc, want_text, what):
    vm = os.path.join(tmp, "vm")
    os.makedirs(vm, exist_ok=True)
    with open(os.path.join(vm, "kernel-6.12.json"), "w") as f:
        json.dump(record, f)
    with open(os.path.join(vm, "initramfs-6.12.cpio"), "wb") as f:
        f.write(initrd)
    rc, out = run(os.path.join(HERE, "run_scenario.py"), "--vm-dir", vm, "--scenario",
                  "labelled", "--kernel", "6.12")
    check(rc == want_rc and want_text in out, f"{what}: exit {rc}, {out.strip()[-200:]!r}")


with tempfile.TemporaryDirectory(prefix="dxbed-") as tmp:
    debian(tmp, {"suite": "bookworm", "step": "the fsdax template (the setup boot)",
                 "error": "fsdax template: the new fsdax-1-6.1.0-57-amd64-1024M.img is not "
                          "valid, not cached: data size 1 B"},
           1, "FAIL: test bed: debian12-image: the fsdax template (the setup boot) failed: ",
           "a Debian image whose template step failed")
    debian(tmp, {"suite": "bookworm", "error": "building a Debian image needs root",
                 "step": "start", "machine_fault": True},
           77, "SKIP: machine fault: building a Debian image needs root",
           "a Debian image this machine cannot build (not root)")
    os.unlink(os.path.join(tmp, "debian12", "image.json"))
    rc, out = run(os.path.join(HERE, "debian_guest_test.py"), "--image-dir",
                  os.path.join(tmp, "debian12"), "--scenario", "services")
    check(rc == 1 and "FAIL: test bed: debian12-image failed: no " in out,
          f"a Debian image that was never built: exit {rc}, {out.strip()[-200:]!r}")
    kernel(tmp, {"available": False, "reason": "guest kernel unavailable: apt-get download "
                                               "linux-image-6.12.117+deb13-amd64 failed"},
           b"", 1, "FAIL: test bed: guest-kernel-6.12 (guest_kernel.py) failed: guest kernel "
                   "unavailable: apt-get download", "a guest kernel that could not be had")
    kernel(tmp, {"available": True, "vmlinux": "/nonexistent"}, b"",
           1, "FAIL: test bed: guest-initramfs-6.12 failed: ", "an empty initramfs")
    # Kata's image (harness/kata_image.py): missing, or failing the cache's
    # own check before the boot (a truncated copy).
    vm = os.path.join(tmp, "vm")
    with open(os.path.join(vm, "kernel-6.12.json"), "w") as f:
        json.dump({"available": True, "vmlinux": "/nonexistent"}, f)
    with open(os.path.join(vm, "initramfs-6.12.cpio"), "wb") as f:
        f.write(b"07070100")
    kata = ("run_scenario.py", "--vm-dir", vm, "--scenario", "kata-nvdimm-dax", "--kernel", "6.12")
    rc, out = run(os.path.join(HERE, kata[0]), *kata[1:])
    check(rc == 1 and "FAIL: test bed: kata-image (harness/kata_image.py) failed: no " in out,
          f"a Kata image that was never built: exit {rc}, {out.strip()[-200:]!r}")
    with open(os.path.join(vm, "kata.img"), "wb") as f:
        f.truncate(1 << 20)
    with open(os.path.join(vm, "kata.json"), "w") as f:
        json.dump({"meta": {"layout": {"image_size": 128 << 20, "data_offset": 2 << 20,
                                       "partition_start": 1 << 20, "fs_offset": 3 << 20,
                                       "fs_size": 125 << 20}}}, f)
    rc, out = run(os.path.join(HERE, kata[0]), *kata[1:])
    check(rc == 1 and "FAIL: test bed: kata-image (harness/kata_image.py) failed: " in out
          and "size 1048576 B" in out, f"a truncated Kata image: exit {rc}, {out.strip()[-200:]!r}")
    # libguestfs's appliance (guestfs_appliance.py's record): a failed step, none built.
    gfs = os.path.join(tmp, "guestfs-vm")
    os.makedirs(gfs)
    rc, out = run(os.path.join(HERE, "guestfs_test.py"), "--vm-dir", gfs)
    check(rc == 1 and "FAIL: test bed: guestfs-appliance failed: no " in out,
          f"a libguestfs appliance that was never built: exit {rc}, {out.strip()[-200:]!r}")
    with open(os.path.join(gfs, "guestfs.json"), "w") as f:
        json.dump({"available": False, "step": "supermin --build",
                   "reason": "supermin ... exited 1: lstat: No such file or directory: "
                             "/lib/modules"}, f)
    rc, out = run(os.path.join(HERE, "guestfs_test.py"), "--vm-dir", gfs)
    check(rc == 1 and "FAIL: test bed: guestfs-appliance: supermin --build "
          "(harness/guestfs_appliance.py) failed: supermin" in out,
          f"a libguestfs appliance whose supermin step failed: exit {rc}, {out.strip()[-200:]!r}")
print(f"{len(FAILS)} failed")
sys.exit(1 if FAILS else 0)
