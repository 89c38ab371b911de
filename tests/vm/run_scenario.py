#!/usr/bin/env python3
"""Run one VM scenario: boot the guest, collect its results, assert.

Exit codes (Meson's conventions): 0 pass, 1 fail, 77 skip (with the reason
printed), 99 harness error.

  run_scenario.py --vm-dir BUILD/tests/vm --scenario fsdax-ext4
  DAXPROBE_CAPTURE=1 run_scenario.py ... --capture   # store tests/fixtures/<scenario>/
"""

import argparse
import re
import os
import shutil
import sys
import time

import scenarios  # first: it imports package_checks
import package_checks
import kata_checks
from harness.guest import Guest, GuestError, Skip, TestBedError
from harness.images import KERNEL_SUFFIX, guest_inputs

SOURCE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def log(msg):
    print(msg, flush=True)


def write_golden(daxprobe, dest):
    """expected.json = the host daxprobe's replay of the capture (the golden
    the unit suite compares against; `meson compile -C build update-goldens`
    regenerates them all)."""
    import subprocess
    p = subprocess.run([daxprobe, "check", "--json", "--replay", dest],
                       capture_output=True, text=True)
    if p.returncode not in (0, 1) or not p.stdout.strip():
        log(f"capture: replay of {dest} failed (exit {p.returncode}): {p.stderr[-500:]}")
        return
    with open(os.path.join(dest, "expected.json"), "w") as f:
        f.write(p.stdout if p.stdout.endswith("\n") else p.stdout + "\n")
    log(f"capture: wrote {dest}/expected.json (replay exit {p.returncode})")


def store_capture(scenario, files, dest_root, daxprobe=None):
    """Write the guest's capture folder (and the reference outputs) as a fixture."""
    dest = os.path.join(dest_root, scenario)
    capture = {k[len("capture/"):]: v for k, v in files.items() if k.startswith("capture/")}
    if not capture:
        log(f"capture: the guest shipped no capture/ folder for {scenario} "
            f"(capture-check.rc={files.get('capture-check.rc', b'?').decode().strip()}, "
            f"stderr: {files.get('capture-check.stderr', b'').decode()[:500]})")
        return False
    if os.path.exists(dest):
        shutil.rmtree(dest)
    for rel, data in capture.items():
        p = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data)
    # The references next to the capture, named so they cannot clash with a
    # captured /proc or /sys path.
    meta = os.path.join(dest, "_vm")
    os.makedirs(meta, exist_ok=True)
    for name in ("check.json", "check.rc", "ndctl-list.json", "daxctl-list.json",
                 "capture-check.json", "capture-check.rc", "mount.txt", "cached.txt",
                 "uname.txt", "dmesg.txt", "commands.log", "scenario",
                 "profile.json", "profile.rc", "profile-dd.json", "profile-dd.rc",
                 "profile-cmd.json", "profile-cmd.rc", "exercise.json", "exercise.rc",
                 "mount-first.txt", "mountinfo-first.txt", "regions.txt", "ndctl-full.json",
                 "boot-lead", "fiemap.txt", "ndctl-dimms.json",
                 "ndctl-full-before.json") + tuple(
                     n for n in files if n.startswith(("host/", "kernel-", "refusal-", "badblocks-",
                                                       "erofs-", "cxl-", "mount-", "check-text",
                                                       "media-errors-", "ars-", "clear-cmds",
                                                       "read-", "check-after", "mce-",
                                                       "region-badblocks-"))):
        if name in files:
            os.makedirs(os.path.dirname(os.path.join(meta, name)), exist_ok=True)
            with open(os.path.join(meta, name), "wb") as f:
                f.write(files[name])
    log(f"capture: stored {len(capture)} files in {dest}")
    if daxprobe:
        write_golden(daxprobe, dest)
    return True


def guest_kernel_crash(console):
    """The task the guest kernel oopsed or panicked in, or None. Under TCG on
    a loaded host the emulator itself has crashed a guest (a double fault in
    the slab allocator with corrupt EFLAGS, during mkdir before any daxprobe
    step): a crash outside daxprobe is worth one more boot; one in daxprobe,
    or a second one, is a failure."""
    if not re.search(r"Oops:|Kernel panic|traps: PANIC|BUG: ", console):
        return None
    m = re.search(r"CPU: \d+ (?:UID: \d+ )?PID: \d+ Comm: (\S+)", console)
    comm = m.group(1) if m else "?"
    return None if comm.startswith("daxprobe") else comm


def boot_and_collect(args, scenario, guest, info, last):
    """Boots the guest, runs the scenario's host actor, waits for the guest
    and returns its result files; keeps the console and results under
    `last` for the post-mortem whatever happened. GuestError if the guest
    did not finish."""
    files = {}
    error = None
    with guest:
        log(f"[{args.scenario}] booting {info['version']} under TCG in {guest.dir}")
        host_files = {}
        try:
            if scenario.host:
                # A failing host actor fails the test, but the guest
                # still finishes and ships its side for the diagnosis.
                try:
                    for k, v in (scenario.host(guest, log) or {}).items():
                        host_files[f"host/{k}"] = (v if isinstance(v, bytes)
                                                   else str(v).encode())
                except Exception as e:  # noqa: BLE001 - any actor failure is a test failure
                    host_error = f"host actor: {type(e).__name__}: {e}"
                    log(f"[{args.scenario}] {host_error}")
                    host_files["host/error.txt"] = host_error.encode()
                    # The guest waits for the actor's word: give it
                    # now rather than let it wait out its bound.
                    try:
                        guest.tell_guest("host-actor-failed", timeout=10)
                    except GuestError as e2:
                        log(f"[{args.scenario}] could not tell the guest: {e2}")
            guest.wait(scenario.timeout or args.timeout)
            files = guest.results()
            files.update(host_files)
        except GuestError as e:
            error = e
        # Keep what we have for post-mortem, whatever happened.
        if os.path.exists(last):
            shutil.rmtree(last)
        os.makedirs(last)
        if os.path.exists(guest.console_path):
            shutil.copy(guest.console_path, last)
        for rel, data in files.items():
            p = os.path.join(last, "results", rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            open(p, "wb").write(data)
        if error:
            raise error
    return files


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vm-dir", required=True, help="BUILDDIR/tests/vm (kernel.json, initramfs)")
    ap.add_argument("--scenario", required=True)
    ap.add_argument("--timeout", type=float,
                    default=float(os.environ.get("DAXPROBE_VM_TIMEOUT", "240")))
    ap.add_argument("--capture", action="store_true",
                    default=os.environ.get("DAXPROBE_CAPTURE") == "1",
                    help="also run daxprobe --capture and store tests/fixtures/<scenario>/")
    ap.add_argument("--fixtures", default=os.path.join(SOURCE_ROOT, "tests", "fixtures"))
    ap.add_argument("--daxprobe", help="the host build of daxprobe (capture: writes expected.json)")
    ap.add_argument("--deb-dir", help="the guest package's folder (BUILDDIR/deb): the guest's "
                                      "daxprobe must be the one that package ships")
    ap.add_argument("--keep", action="store_true", help="keep the run folder")
    ap.add_argument("--human", action="store_true", help="print daxprobe's human report")
    ap.add_argument("--no-assert", action="store_true", help="boot and show, do not assert")
    ap.add_argument("--skip-reason", help="skip with this reason (set by meson.build)")
    ap.add_argument("--kernel", default="6.1", choices=sorted(KERNEL_SUFFIX),
                    help="which Debian kernel's image to boot (6.1: Debian 12, 6.12: Debian 13, sid: Debian 14)")
    args = ap.parse_args()

    try:
        if args.skip_reason:
            raise Skip(args.skip_reason)
        scenario = scenarios.SCENARIOS.get(args.scenario)
        if scenario is None:
            log(f"unknown scenario {args.scenario}; known: {', '.join(scenarios.SCENARIOS)}")
            return 99
        info, initrd = guest_inputs(args.vm_dir, args.kernel)
        # Each run keeps its console and results under BUILDDIR/tests/vm/runs/.
        run_name = args.scenario + KERNEL_SUFFIX[args.kernel]
        last = os.path.join(args.vm_dir, "runs", run_name)
        kata = {}
        if scenario.kata:
            # Kata's image: checked as the cache checks it, then attached
            # read-only as Kata's drivers attach it.
            image, size = kata_checks.image_for_boot(args.vm_dir)
            attach = scenario.kata[0]
            kata = {"shared_image": image, "nvdimm_size": str(size), "share": False,
                    "nvdimm": attach == "nvdimm", "virtio_pmem": attach == "virtio-pmem"}
        for attempt in (1, 2):
            opts = {"nvdimm": scenario.nvdimm, "virtio_pmem": scenario.virtio_pmem}
            opts.update(kata)
            guest = Guest(info["vmlinux"], initrd, scenario.snippet,
                          label_size=scenario.label_size, memory=scenario.memory,
                          capture=args.capture,
                          human=args.human, keep=args.keep,
                          extra_cmdline=scenario.boot_cmdline(),
                          virtiofs_files=scenario.virtiofs_files, cxl=scenario.cxl, **opts)
            try:
                files = boot_and_collect(args, scenario, guest, info, last)
                break
            except GuestError as e:
                console = guest.console_text()
                crashed = guest_kernel_crash(console)
                if attempt == 1 and crashed:
                    log(f"[{args.scenario}] the guest kernel crashed in '{crashed}', not in "
                        f"daxprobe ({e}): booting it once more")
                    log(console[-3000:])
                    continue
                log(f"[{args.scenario}] FAIL: {e}")
                log("---- console (tail) ----")
                log(console[-6000:])
                return 1
        t_done = guest.t_done - guest.t_start if guest.t_done else float("nan")
        t_exit = guest.t_exit - guest.t_start if guest.t_exit else float("nan")
        steps = files.get("steps.log", b"").decode(errors="replace")
        log(f"[{args.scenario}] guest done at {t_done:.1f} s, QEMU exited at {t_exit:.1f} s "
            f"(host wall); guest steps (uptime s):\n{steps}")

        if args.human:
            log(files.get("check.txt", b"(no human report)\n").decode(errors="replace"))
        if args.capture:
            store_capture(run_name, files, args.fixtures, args.daxprobe)
            # The boot's later scenarios (`then`) captured too: each its own fixture.
            for name in scenario.then:
                sub = scenarios.sub_results(files, name)
                if sub is not None:
                    sub["boot-lead"] = args.scenario.encode()  # test_checks: a later scenario
                    store_capture(name + KERNEL_SUFFIX[args.kernel], sub, args.fixtures,
                                  args.daxprobe)
        if args.no_assert:
            return 0

        if args.deb_dir:
            try:
                files["host/package-daxprobe.sha256"] = package_checks.packaged_daxprobe_sha256(
                    args.deb_dir).encode()
            except RuntimeError as e:
                log(f"[{args.scenario}] FAIL: {e}")
                return 1
        checker, res = scenarios.run_checks(scenario, files, live=True)
        for n in checker.notes:
            log(f"[{args.scenario}] note: {n}")
        if checker.failures:
            log(f"[{args.scenario}] FAIL: {len(checker.failures)} assertion(s):")
            for f in checker.failures:
                log(f"  - {f}")
            log(f"---- daxprobe exit {res.rc('check.rc')}; check.json ----")
            log(res.text("check.json")[:8000])
            log("---- check.stderr ----")
            log(res.text("check.stderr")[-3000:])
            log("---- ndctl list -BRN ----")
            log(res.text("ndctl-list.json")[:3000])
            log(f"---- guest commands ----\n{res.text('commands.log')[-4000:]}")
            log(f"(full results in {last})")
            # Again at the end: meson shows only the log's tail.
            log(f"[{args.scenario}] FAIL, assertions: " + " | ".join(
                f.splitlines()[0][:300] for f in checker.failures))
            return 1
        log(f"[{args.scenario}] PASS")
        return 0
    except Skip as e:
        log(f"SKIP: {e}")
        return 77
    except TestBedError as e:
        log(f"FAIL: {e}")
        return 1


if __name__ == "__main__":
    # Meson's timeout sends SIGTERM: unwind so the Guest context manager
    # kills and reaps QEMU.
    import signal
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    t0 = time.monotonic()
    rc = main()
    print(f"(run_scenario: {time.monotonic() - t0:.1f} s, exit {rc})", flush=True)
    sys.exit(rc)
