"""Host checks that the guest ran the guest package, and the boot-hook-*
scenarios: the package's initramfs-tools local-bottom script run at boot
(tests/vm/guest/boot-hook.sh) with daxprobe.mode=warn or strict.

The matrix is mode (warn, strict) x storage (DAX, non-DAX); three boots cover
its outcomes:
  warn   + non-DAX  problem logged with its remedies, boot goes on
  strict + non-DAX  problem logged with its remedies, boot stops
  strict + DAX      "DAX verified" logged, boot goes on
warn + DAX is left out: it logs what strict + DAX logs (the verdict does not
depend on the mode) and goes on as every warn boot does; the script's only
mode-dependent branch is the stop, which the strict cells take and skip.

The verdict the hook logged is compared with the kernel's own answer in the
same guest: statx's STATX_ATTR_DAX and MAP_SYNC on a file of the mount
(kernel-root.txt), the device's queue/dax, and (raw) the kernel's "Turning off
DAX" line.
"""

import hashlib
import json
import re
import subprocess
import tarfile

from harness import mkinitramfs
import scenarios as sc  # the shared helpers; used at call time (scenarios imports this module)
import verdict_checks


def packaged_daxprobe_sha256(deb_dir):
    """sha256 of /usr/bin/daxprobe inside the guest package in deb_dir."""
    deb = mkinitramfs.find_guest_deb(deb_dir)
    p = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", deb], stdout=subprocess.PIPE)
    digest = None
    with tarfile.open(fileobj=p.stdout, mode="r|") as tar:
        for m in tar:
            if m.name in ("./usr/bin/daxprobe", "usr/bin/daxprobe") and m.isfile():
                digest = hashlib.sha256(tar.extractfile(m).read()).hexdigest()
    p.stdout.close()
    if p.wait() != 0 or digest is None:
        raise RuntimeError(f"{deb}: no /usr/bin/daxprobe (dpkg-deb exit {p.returncode})")
    return digest


def expect_packaged_daxprobe(c, res):
    """The daxprobe the guest ran is byte for byte the one in the package."""
    want = res.text("host/package-daxprobe.sha256").strip()
    if not want:
        return
    got = res.text("daxprobe.sha256").split()
    c.eq(got[0] if got else None, want, "sha256 of the guest's /usr/bin/daxprobe vs the guest package's")


def hook_lines(dmesg):
    """The boot check's kernel log lines ("daxprobe: ..."), without timestamps."""
    out = []
    for line in dmesg.splitlines():
        m = re.match(r"^\[[ \d.]+\] (daxprobe: .*)$", line)
        if m:
            out.append(m.group(1))
    return out


def remedies(obj):
    """Every "remedy" string in the report, as the hook's sed finds them."""
    found = set()
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == "remedy" and isinstance(v, str) and v:
                found.add(v)
            else:
                found |= remedies(v)
    elif isinstance(obj, list):
        for v in obj:
            found |= remedies(v)
    return found


def logged_remedies(lines):
    """The hook logs the JSON text of each remedy: decode it the same way."""
    out = set()
    for line in lines:
        if line.startswith("daxprobe: remedy: "):
            text = line[len("daxprobe: remedy: "):]
            try:
                out.add(json.loads(f'"{text}"'))
            except ValueError:
                out.add(text)
    return out


def expect_boot_hook(c, res, mode, dax, outcome):
    hook = res.kv("boot-hook.txt")
    if not c.check(hook, "boot-hook.txt missing: the boot hook did not run\n" + res.text("commands.log")[-2000:]):
        return
    c.eq(hook.get("outcome"), outcome, f"boot outcome (daxprobe.mode={mode}, DAX {'on' if dax else 'off'})")
    try:
        cost = float(hook["uptime_after"]) - float(hook["uptime_before"])
        c.note(f"boot hook cost: {cost:.2f} s of guest uptime (run_scripts /scripts/local-bottom, "
               f"daxprobe.mode={mode})")
    except (KeyError, ValueError):
        c.check(False, f"boot-hook.txt uptimes: {hook}")

    # The hook's own report (/run/daxprobe/check.json, shipped as check.json).
    # (The script keeps daxprobe's exit status to itself: exit_code is the
    # document's; the logged verdict below is what the script made of it.)
    code = "dax_verified" if dax else "problems_found"
    doc = res.check
    if c.check(doc is not None, "the hook's report (/run/daxprobe/check.json) is not one JSON "
               "document:\n" + res.text("check.json")[:1000] + res.text("check.stderr")[-1000:]):
        c.eq(doc.get("schema"), "daxprobe.check/1", "schema of the hook's report")
        c.eq(doc.get("exit_code"), 0 if dax else 1, "exit_code in the hook's report")
        c.eq(sc.verdict_code(doc), code, "the hook's overall verdict")
        m = sc.pmem_mount(doc)
        if c.check(m is not None, "the hook's report has no /mnt/pmem mount"):
            c.eq(sc.verdict_code(m), "dax_active" if dax else "dax_silently_off",
                 "the hook's mount verdict")

    # What it logged to the kernel log, for the console and the journal.
    lines = hook_lines(res.text("dmesg.txt"))
    want = f"daxprobe: DAX verified (mode {mode})" if dax else f"daxprobe: PROBLEM: {code} (mode {mode})"
    c.check(want in lines, f"kernel log has {want!r}; the hook logged: {lines}")
    if res.check is not None:
        # The hook logs remedies with a problem (exit 1), every one the report
        # holds; with DAX verified it logs none, even where the report notes a
        # cost with a remedy (bounce_buffer_for_hotplug).
        in_report = remedies(res.check) if not dax else set()
        logged = logged_remedies(lines)
        c.eq(sorted(logged), sorted(in_report), "remedies logged vs remedies in the hook's report")
        if not dax:
            c.check(any("ndctl create-namespace" in r for r in logged),
                    f"a logged remedy names ndctl create-namespace: {sorted(logged)}")
    stop_line = "daxprobe: daxprobe.mode=strict: stopping the boot"
    panic = res.text("boot-hook-panic.txt")
    if outcome == "stopped":
        c.check(stop_line in lines, f"kernel log has {stop_line!r}: {lines}")
        c.check("DAX is not in effect" in panic, f"the script's panic reason: {panic!r}")
    else:
        c.check(stop_line not in lines, f"the hook said it stops the boot: {lines}")
        c.eq(panic, "", "panic reason (none: the boot goes on)")

    # The kernel's own answer in the same guest agrees with the logged verdict.
    k = verdict_checks.kernel_file(c, res, "root")
    if k is not None:
        c.eq(k["dax"], dax, "kernel statx STATX_ATTR_DAX on a file of the mount")
        c.eq(k["map_sync"], dax, "kernel accepts MAP_SYNC on a file of the mount")
    c.eq(res.text("queue-dax.txt").strip(), "1" if dax else "0", "the device's queue/dax")
    if not dax:
        c.check("Turning off DAX" in res.text("dmesg.txt"), "kernel logged 'Turning off DAX'")


def check_boot_hook_warn_raw(c, res):
    sc.expect_mount_ok(c, res)
    expect_boot_hook(c, res, "warn", dax=False, outcome="continued")


def check_boot_hook_strict_raw(c, res):
    sc.expect_mount_ok(c, res)
    expect_boot_hook(c, res, "strict", dax=False, outcome="stopped")


def check_boot_hook_strict_fsdax(c, res):
    sc.expect_mount_ok(c, res)
    expect_boot_hook(c, res, "strict", dax=True, outcome="continued")
