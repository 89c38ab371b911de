#!/usr/bin/env python3
"""The packages in a real Debian guest (debian_image.py), proven at boot:
every assertion reads what the kernel and systemd say (systemctl show,
journalctl, the kernel log, lsinitramfs, the console), not what daxprobe
says about itself. Several assertions share one boot (a TCG boot of a
systemd guest takes tens of seconds).

  debian_guest_test.py --image-dir BUILD/tests/vm/debian12 --scenario services
      boot: root = XFS on a raw namespace, rootflags=dax=always (DAX silently
      off), daxprobe.mode=warn, the agent's port; the real collector on the
      host. The hook and its modules in the initramfs (lsinitramfs); its
      verdict and remedy in the kernel log, nfit loaded with no unknown
      symbol, the boot goes on to systemd. Then the services in that boot:
      daxprobe-check.service ran after the nd bus appeared (not skipped), its
      problem and remedy in the journal at warning/err, perf's refusal
      explained; agent active, reports stored by the collector; QMP
      device_del/device_add of the port -> stopped/started, NRestarts=0; then
      remove (prerm stops the agent), install (postinst starts it), upgrade,
      purge (nothing left). One boot for both: a systemd boot costs 26-55 s
      under TCG.
  --scenario initramfs-strict
      as services' boot with daxprobe.mode=strict: the remedy on the console
      and the boot stops in the initramfs.
  --scenario initramfs-strict-dax [--collector-lifecycle]
      root = the same XFS on an fsdax namespace, daxprobe.mode=strict: the
      boot goes on to systemd, the kernel mounted / with dax=always, queue/dax
      1, the verdict OK in the kernel log. Then (Debian 12: the collector's
      .deb is built for the host's release) install, upgrade, remove and purge
      of daxprobe-collector: enabled and running, restarted on upgrade,
      stopped on remove with its data kept, nothing left after purge.
  --scenario dracut-warn | dracut-strict (an image made with --initramfs dracut)
      as services' warn boot / initramfs-strict; lsinitrd lists the daxprobe
      module; strict: dracut's FATAL and halt, the root never switched to.

Exit: 0 pass, 1 fail, 77 skip (reason printed), 99 harness error.
"""

import argparse
import json
import os
import re
import sqlite3
import sys
import tempfile
import time

from collector_scenario import CollectorProc
from harness.guest import GuestError, Skip
from harness.systemd_guest import SystemdGuest, image_inputs

REMEDY = "ndctl create-namespace -f -e namespace0.0 -m fsdax"


def log(msg):
    print(msg, flush=True)


class Checks:
    def __init__(self):
        self.failures = 0

    def check(self, ok, what, detail=""):
        log(f"{'ok  ' if ok else 'FAIL'} {what}" + (f"\n     {detail}" if detail and not ok else ""))
        self.failures += 0 if ok else 1
        return ok

    def eq(self, got, want, what):
        return self.check(got == want, f"{what}: {got!r}" + ("" if got == want else f" (want {want!r})"))


def timed(label, t0):
    log(f"[time] {label}: {time.monotonic() - t0:.1f} s")


# -- services -------------------------------------------------------------------

def check_check_service(c, g):
    # udev starts the check when the nd bus appears, which can be after
    # systemd says the boot finished (seen on Debian 13 once its boot took
    # 42 s: the check had not run yet). Ended: active (exit 0) or failed.
    took = g.wait_unit("daxprobe-check.service", ("active", "failed"), timeout=300)
    log(f"[time] boot finished -> daxprobe-check.service ended: {took:.1f} s")
    p = g.show("daxprobe-check.service", "ActiveState", "Result", "ConditionResult",
               "ExecMainStatus", "ExecMainStartTimestampMonotonic")
    c.eq(p.get("ConditionResult"), "yes", "daxprobe-check.service: its conditions held (not skipped)")
    c.check(int(p.get("ExecMainStartTimestampMonotonic") or 0) > 0,
            f"daxprobe-check.service ran at boot: {p}")
    c.eq(p.get("ExecMainStatus"), "1", "daxprobe-check.service: exit 1 (raw namespace: a problem)")
    # udev brought the nd bus (nfit) up: its device unit wants the check,
    # which started after the bus existed.
    _, dev = g.sh("systemctl list-units --type=device --all --plain --no-legend | "
                  "awk '$1 ~ /-ndbus[0-9]+\\.device$/ {print $1}'")
    dev = dev.strip()
    c.check(bool(dev), f"systemd has a device unit for the nd bus: {dev!r}")
    if dev:
        wanted = g.show("daxprobe-check.service", "WantedBy").get("WantedBy", "")
        c.check(dev in wanted.split(), f"the nd bus's device unit wants the check: {wanted!r}")
        bus_up = int(g.show(dev, "ActiveEnterTimestampMonotonic")
                     .get("ActiveEnterTimestampMonotonic") or 0)
        start = int(p.get("ExecMainStartTimestampMonotonic") or 0)
        c.check(0 < bus_up <= start, f"the check started after the bus appeared "
                f"({bus_up / 1e6:.2f} s <= {start / 1e6:.2f} s)")
    entries = journal_lines(g, "daxprobe-check.service")
    c.check(any("FAIL" in m and "device_cannot_dax" in m for m, _ in entries),
            "the journal shows the check's problem", "\n".join(m for m, _ in entries))
    c.check(any(REMEDY in m for m, _ in entries), "the journal shows its remedy")
    expect_priorities(c, entries)
    check_perf_reason(c, g, entries)


def journal_lines(g, unit, invocation=None):
    """[(MESSAGE, PRIORITY)] of the unit's journal in this boot (one
    invocation's with `invocation`), as journald stored them."""
    match = f"_SYSTEMD_INVOCATION_ID={invocation}" if invocation else ""
    _, out = g.sh(f"journalctl -b -u {unit} {match} -o json --output-fields=MESSAGE,PRIORITY "
                  "--no-pager")
    entries = []
    for line in out.splitlines():
        if line.startswith("{"):
            e = json.loads(line)
            msg = e.get("MESSAGE")
            msg = bytes(msg).decode(errors="replace") if isinstance(msg, list) else str(msg)
            entries.append((msg, e.get("PRIORITY")))
    return entries


# A verdict's header line ("  WARN code: summary") and a report-wide warning.
VERDICT_LINE = re.compile(r"^\s*(OK  |WARN|FAIL) [a-z_]+: ")
PRIORITY_OF = {"OK  ": "6", "WARN": "4", "FAIL": "3"}


def expect_priorities(c, entries):
    """Each verdict line at its severity's journal priority exactly: OK 6
    (info), WARN 4 (warning), FAIL 3 (err); a report-wide "warning:" line 4.
    This boot has both kinds (the raw namespace is a problem; maxmem above
    4 GiB makes the bounce-buffer warning)."""
    seen = {"6": 0, "4": 0, "3": 0}
    for msg, prio in entries:
        m = VERDICT_LINE.match(msg)
        want = PRIORITY_OF[m.group(1)] if m else "4" if msg.startswith("warning:") else None
        if want is None:
            continue
        seen[want] += 1
        c.eq(prio, want, f"journal priority of {msg.strip()[:90]!r}")
    c.check(seen["4"] > 0 and seen["3"] > 0,
            f"the check logged warning and problem lines (by priority: {seen})")
    c.check(any("problems_found" in m and p == "3" for m, p in entries),
            "the overall verdict at priority err")


def check_perf_reason(c, g, entries):
    """perf in the unit (CAP_PERFMON, no CAP_SYS_ADMIN), at the guest's
    perf_event_paranoid and again at 2: refused at 3 (Debian's kernels then
    want CAP_SYS_ADMIN) and saying so, usable at 2."""
    unit = "daxprobe-check.service"
    _, paranoid = g.sh("cat /proc/sys/kernel/perf_event_paranoid")
    paranoid = paranoid.strip()
    perf = "\n".join(m for m, _ in entries if "perf counters" in m)
    log(f"perf_event_paranoid={paranoid}; {perf.strip()}")
    expect_perf_line(c, perf, paranoid)
    if paranoid == "2":
        return
    before = g.show(unit, "InvocationID").get("InvocationID")
    # The check exits 1 (the raw namespace), so the restart "fails": its
    # journal is what counts.
    g.sh("sysctl -q kernel.perf_event_paranoid=2", check=True)
    g.sh(f"systemctl restart {unit}", timeout=300)
    inv = g.show(unit, "InvocationID").get("InvocationID")
    c.check(inv and inv != before, f"the check ran again at paranoid 2 ({before} -> {inv})")
    again = "\n".join(m for m, _ in journal_lines(g, unit, inv) if "perf counters" in m)
    g.sh(f"sysctl -q kernel.perf_event_paranoid={paranoid}", check=True)
    log(f"perf_event_paranoid=2; {again.strip()}")
    expect_perf_line(c, again, "2")


def expect_perf_line(c, perf, paranoid):
    if paranoid == "3":
        c.check("unusable" in perf and "CAP_SYS_ADMIN" in perf
                and "perf_event_paranoid=3" in perf,
                "perf's refusal in the unit says why (paranoid 3 wants CAP_SYS_ADMIN)", perf)
    else:
        c.check("perf counters: usable" in perf,
                f"perf at perf_event_paranoid={paranoid} with CAP_PERFMON: usable", perf)


def check_agent_and_hotplug(c, g, coll, state):
    t0 = time.monotonic()
    g.wait_unit("daxprobe-agent.service", "active")
    try:
        coll.wait_for("(start, ", 180)
        logged = ""
    except RuntimeError as e:
        logged = str(e)
    c.check(not logged, "the collector logged the agent's start report as stored", logged)
    c.check(any(r["reason"] == "start" for r in stored_reports(state)),
            "the collector's database holds the agent's start report")
    timed("agent active + first report stored", t0)
    p = g.show("daxprobe-agent.service", "ActiveState", "NRestarts", "MainPID")
    c.eq(p.get("NRestarts"), "0", "agent NRestarts at boot")
    # The unit's sandbox must let the agent hear the kernel's device events
    # (AF_NETLINK in RestrictAddressFamilies): without them a changed
    # namespace waits for the next periodic check (issue 35).
    refused = [m for m, _ in journal_lines(g, "daxprobe-agent.service")
               if "kernel device events not watched" in m]
    c.eq(refused, [], "the agent under its unit watches the kernel's device events")
    # Port removed: udev removes the device, systemd stops the bound unit.
    t0 = time.monotonic()
    g.qmp("device_del", id="agentport")
    g.wait_unit("daxprobe-agent.service", "inactive")
    timed("device_del -> agent inactive", t0)
    _, restarts = g.sh("journalctl -b -u daxprobe-agent.service -o cat --no-pager | "
                       "grep -c 'Scheduled restart' || true")
    c.eq(restarts.strip(), "0", "no restart scheduled after the port went")
    p = g.show("daxprobe-agent.service", "ActiveState", "NRestarts", "Result")
    c.eq((p.get("ActiveState"), p.get("NRestarts")), ("inactive", "0"),
         "no port: agent inactive, NRestarts=0")
    t0 = time.monotonic()
    g.qmp("device_add", **device_args(SystemdGuest.agent_port_device()))
    g.wait_unit("daxprobe-agent.service", "active")
    timed("device_add -> agent active", t0)
    p = g.show("daxprobe-agent.service", "NRestarts")
    c.eq(p.get("NRestarts"), "0", "port back: agent started again, NRestarts=0")


def device_args(spec):
    driver, *rest = spec.split(",")
    return dict([("driver", driver)] + [kv.split("=", 1) for kv in rest])


def check_lifecycle(c, g, coll):
    # The package's triggers would remake the initramfs inside this TCG guest
    # (~20 min): the image's own build proved that trigger on the host.
    g.sh("echo update_initramfs=no > /etc/initramfs-tools/update-initramfs.conf", check=True)
    t0 = time.monotonic()
    rc, out = g.sh("dpkg -r daxprobe 2>&1", timeout=300)
    c.eq(rc, 0, "dpkg -r daxprobe")
    p = g.show("daxprobe-agent.service", "ActiveState", "LoadState")
    c.eq(p.get("ActiveState"), "inactive", "after remove: the agent is stopped (prerm)")
    rc, _ = g.sh("pidof daxprobe")
    c.check(rc != 0, "after remove: no daxprobe process")
    timed("remove", t0)
    t0 = time.monotonic()
    rc, out = g.sh("apt-get install -y -q --no-install-recommends /root/debs/daxprobe_*.deb 2>&1",
                   timeout=300)
    c.eq(rc, 0, "apt-get install daxprobe in the running guest")
    g.wait_unit("daxprobe-agent.service", "active", timeout=60)
    p = g.show("daxprobe-agent.service", "ActiveState", "SubState", "MainPID")
    _, comm = g.sh(f"cat /proc/{p.get('MainPID')}/comm")
    c.eq((p.get("ActiveState"), p.get("SubState"), comm.strip()), ("active", "running", "daxprobe"),
         "after install: postinst started the agent")
    timed("install", t0)
    pid1 = g.show("daxprobe-agent.service", "MainPID").get("MainPID")
    t0 = time.monotonic()
    rc, out = g.sh("apt-get install -y -q --no-install-recommends "
                   "/root/debs/upgrade/daxprobe_*.deb 2>&1", timeout=300)
    c.eq(rc, 0, "apt-get install of a newer daxprobe (upgrade)")
    g.wait_unit("daxprobe-agent.service", "active", timeout=60)
    p = g.show("daxprobe-agent.service", "MainPID", "NRestarts")
    _, ver = g.sh("dpkg-query -W -f '${Version}' daxprobe")
    c.check(ver.endswith("upgrade1"), f"upgraded to {ver}")
    c.check(p.get("MainPID") not in (pid1, "0"), f"after upgrade: a new agent runs ({pid1} -> {p.get('MainPID')})")
    timed("upgrade", t0)
    t0 = time.monotonic()
    rc, out = g.sh("dpkg -P daxprobe 2>&1", timeout=300)
    c.eq(rc, 0, "dpkg -P daxprobe")
    c.eq(g.show("daxprobe-agent.service", "ActiveState").get("ActiveState"), "inactive",
         "after purge: no agent")
    _, left = g.sh("find / -xdev \\( -name '*daxprobe*' -o -name '90daxprobe' \\) "
                   "-not -path '/root/debs*' -not -name '*daxprobe-testbed*' 2>/dev/null")
    c.eq(left.split(), [], "after purge: no daxprobe file left on the root filesystem")
    _, status = g.sh("dpkg-query -W -f '${Status}' daxprobe 2>&1")
    c.check("not-installed" in status or "no packages found" in status, f"dpkg: {status.strip()}")
    timed("purge", t0)


def scenario_services(c, g, collector_bin, image_dir, info):
    check_initramfs_contents(c, image_dir, info.get("initramfs", "initramfs-tools"),
                             info.get("modules"))
    t0 = time.monotonic()
    check_warn_boot(c, g)
    rc, state = g.sh("systemctl is-system-running --wait", timeout=600)
    timed(f"boot finished ({state.strip()})", t0)
    _, failed = g.sh("systemctl --failed --no-legend --plain")
    log(f"failed units: {failed.strip() or 'none'}")
    check_check_service(c, g)
    # The guest's own answer about its root, before the lifecycle below.
    _, root_opts = g.sh("findmnt -no OPTIONS /")
    with tempfile.TemporaryDirectory(prefix="dxsd-coll-") as state:
        coll = CollectorProc(collector_bin, g.agent_sock, state, lambda line: None)
        try:
            check_agent_and_hotplug(c, g, coll, state)
            check_lifecycle(c, g, coll)
        finally:
            coll.stop()
        check_stored_reports(c, stored_reports(state), root_opts)


def stored_reports(state):
    """The reports rows of the collector's database, read with sqlite3 (not
    through the collector's own query)."""
    db = os.path.join(state, "collector.db")
    if not os.path.exists(db):
        return []
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        con.row_factory = sqlite3.Row
        return [dict(r) for r in con.execute(
            "SELECT vm, stream, seq, reason, verdict, report FROM reports ORDER BY id")]
    finally:
        con.close()


def check_stored_reports(c, rows, root_opts):
    """Every stored report is the agent's document, its verdict column is the
    document's, and the root mount's verdict is what the kernel says of / :
    mounted with dax asked but not in effect (warn boot on a raw namespace)."""
    log(f"stored reports: {[(r['reason'], r['seq'], r['verdict']) for r in rows]}")
    c.check(len(rows) >= 1 and any(r["reason"] == "start" for r in rows),
            f"the database holds the agent's reports ({len(rows)} rows)")
    c.check("dax=always" not in root_opts, f"the kernel: / without dax=always ({root_opts.strip()})")
    for r in rows:
        try:
            doc = json.loads(r["report"])
        except ValueError:
            c.check(False, f"stored report {r['stream']}/{r['seq']} is JSON")
            continue
        top = (doc.get("verdict") or {}).get("code")
        root = next((m for m in doc.get("mounts") or [] if m.get("mount_point") == "/"), {})
        c.eq((r["vm"], doc.get("schema"), r["verdict"], top),
             ("guest", "daxprobe.check/1", "problems_found", "problems_found"),
             f"stored report {r['reason']} seq {r['seq']}: vm, schema, verdict column, document")
        c.eq((root.get("verdict") or {}).get("code"), "dax_silently_off",
             f"stored report seq {r['seq']}: the root mount as the kernel has it")


# -- the collector's package ----------------------------------------------------

# What a package's life adds that the system keeps for every package, not
# ours (what each holds; seen after this test's install, upgrade, remove and
# purge on Debian 12). Nothing under them may carry our name (checked apart),
# and everything else new is ours.
SYSTEM_OWNED = {
    "/var/cache/apt/": "apt's binary caches of the package lists (pkgcache.bin, srcpkgcache.bin)",
    "/var/lib/apt/lists/": "apt's lists; auxfiles is where it indexes a local .deb it installs",
}


def tree(g):
    _, out = g.sh("find / -xdev 2>/dev/null", timeout=300)
    return set(out.splitlines())


def check_collector_lifecycle(c, g):
    """install, upgrade, remove, purge of daxprobe-collector with apt and dpkg
    in the running guest; systemd and dpkg say what happened."""
    unit = "daxprobe-collector.service"
    before = tree(g)
    t0 = time.monotonic()
    rc, out = g.sh("apt-get install -y -q --no-install-recommends "
                   "/root/debs/daxprobe-collector_*.deb 2>&1", timeout=300)
    c.eq(rc, 0, "apt-get install daxprobe-collector in the running guest")
    g.wait_logged(unit, "metrics on port")
    p = g.show(unit, "UnitFileState", "ActiveState", "SubState", "NRestarts", "MainPID")
    c.eq((p.get("UnitFileState"), p.get("ActiveState"), p.get("SubState")),
         ("enabled", "active", "running"), "after install: the collector enabled and running")
    c.eq(p.get("NRestarts"), "0", "after install: collector NRestarts")
    rc, _ = g.sh("test -f /var/lib/private/daxprobe/collector.db")
    c.eq(rc, 0, "after install: the collector's state (StateDirectory) exists")
    timed("collector install", t0)
    t0 = time.monotonic()
    pid1 = p.get("MainPID")
    rc, out = g.sh("apt-get install -y -q --no-install-recommends "
                   "/root/debs/upgrade/daxprobe-collector_*.deb 2>&1", timeout=300)
    c.eq(rc, 0, "apt-get install of a newer daxprobe-collector (upgrade)")
    g.wait_logged(unit, "metrics on port")
    p = g.show(unit, "UnitFileState", "ActiveState", "NRestarts", "MainPID")
    _, ver = g.sh("dpkg-query -W -f '${Version}' daxprobe-collector")
    c.check(ver.endswith("upgrade1"), f"collector upgraded to {ver}")
    c.check(p.get("MainPID") not in (pid1, "0"),
            f"after upgrade: the new collector runs ({pid1} -> {p.get('MainPID')})")
    c.eq((p.get("UnitFileState"), p.get("ActiveState"), p.get("NRestarts")),
         ("enabled", "active", "0"), "after upgrade: still enabled, active, no restart")
    timed("collector upgrade", t0)
    t0 = time.monotonic()
    rc, out = g.sh("dpkg -r daxprobe-collector 2>&1", timeout=300)
    c.eq(rc, 0, "dpkg -r daxprobe-collector")
    p = g.show(unit, "ActiveState", "LoadState")
    c.eq((p.get("ActiveState"), p.get("LoadState")), ("inactive", "not-found"),
         "after remove: the collector stopped, its unit gone")
    rc, _ = g.sh("pidof daxprobe-collector")
    c.check(rc != 0, "after remove: no daxprobe-collector process")
    rc, _ = g.sh("test -f /var/lib/private/daxprobe/collector.db")
    c.eq(rc, 0, "after remove: the stored reports are kept (only purge deletes data)")
    timed("collector remove", t0)
    t0 = time.monotonic()
    rc, out = g.sh("dpkg -P daxprobe-collector 2>&1", timeout=300)
    c.eq(rc, 0, "dpkg -P daxprobe-collector")
    _, status = g.sh("dpkg-query -W -f '${Status}' daxprobe-collector 2>&1")
    c.check("not-installed" in status or "no packages found" in status, f"dpkg: {status.strip()}")
    new = tree(g) - before
    log("new after purge, the system's: " + ", ".join(sorted(
        p for p in new if p.startswith(tuple(SYSTEM_OWNED)))))
    left = sorted(p for p in new if not p.startswith(tuple(SYSTEM_OWNED)))
    c.eq(left, [], "after purge: nothing the collector added is left")
    named = sorted(p for p in new if "daxprobe" in p)
    c.eq(named, [], "after purge: nothing named after it anywhere, the system's records included")
    timed("collector purge", t0)


# -- initramfs ------------------------------------------------------------------

def dracut_modules(listing):
    """The dracut modules lsinitrd lists (its "dracut modules:" section)."""
    lines = listing.splitlines()
    start = lines.index("dracut modules:") + 1 if "dracut modules:" in lines else len(lines)
    mods = []
    for line in lines[start:]:
        if not line.strip() or line.startswith("="):
            break
        mods.append(line.strip())
    return mods


def check_initramfs_contents(c, image_dir, generator, modules=None):
    text = open(os.path.join(image_dir, "lsinitramfs.txt")).read()
    names = set(text.split())

    def has(suffix):
        return any(n.endswith(suffix) for n in names)
    if generator == "dracut":
        mods = dracut_modules(text)
        c.check("daxprobe" in mods, f"lsinitrd: dracut module daxprobe in the image ({mods})")
        c.check(has("pre-pivot/90-daxprobe-check.sh"), "lsinitrd: its pre-pivot hook")
    else:
        c.check("scripts/local-bottom/daxprobe" in names,
                "initramfs holds scripts/local-bottom/daxprobe")
    for path in ("usr/bin/daxprobe", "usr/libexec/daxprobe/daxprobe-init-hook.sh"):
        c.check(path in names, f"initramfs holds {path}")
    for mod in ("libnvdimm.ko", "nfit.ko", "nd_pmem.ko", "dax_pmem.ko", "xfs.ko"):
        c.check(has("/" + mod) or has("/" + mod + ".xz") or has("/" + mod + ".zst"),
                f"initramfs holds {mod}")
    if modules is None:
        return
    before = set(open(os.path.join(image_dir, "lsinitramfs-nohook.txt")).read().split())

    def had(mod):
        return any(n.endswith(("/" + mod, f"/{mod}.xz", f"/{mod}.zst")) for n in before)
    # The initramfs without daxprobe was made with the image's MODULES:
    # Debian's `most` copies the disk controllers' drivers (ahci), an
    # appliance's `list` only what it names.
    c.check(had("ahci.ko") == (modules == "most"),
            f"MODULES={modules}: ahci.ko {'in' if modules == 'most' else 'not in'} "
            "the initramfs without daxprobe")
    if modules == "list":
        for mod in ("virtio_blk.ko", "xfs.ko"):
            c.check(had(mod), f"MODULES=list: {mod} named in /etc/initramfs-tools/modules")
        # Neither does `most` bring the NVDIMM's modules; with `list` nothing
        # else can: the hook brought them.
        for mod in ("libnvdimm.ko", "nfit.ko", "nd_pmem.ko"):
            c.check(not had(mod), f"MODULES=list: {mod} only with daxprobe's hook")


def scenario_initramfs(c, g, mode, image_dir, info):
    generator = info.get("initramfs", "initramfs-tools")
    check_initramfs_contents(c, image_dir, generator, info.get("modules"))
    t0 = time.monotonic()
    if mode == "strict" and generator == "dracut":
        g.wait_console(rb"daxprobe\.mode=strict: stopping the boot", 600)
        timed("QEMU start -> strict stop", t0)
        # dracut's die: "dracut: FATAL: <reason>", then systemd in the
        # initramfs halts (or, with rd.shell, an emergency shell); the root
        # is never switched to.
        g.wait_console(rb"dracut: FATAL: daxprobe", 120)
        g.wait_console(rb"System halted|[Ee]mergency", 120)
        con = g.console_text()
        c.check("daxprobe: PROBLEM: problems_found (mode strict)" in con,
                "strict: the verdict on the console")
        c.check(f"daxprobe: remedy: {REMEDY}" in con, "strict: the remedy on the console")
        c.check("Switching root" not in con and "switch_root" not in con,
                "strict: the boot stopped in the initramfs (no switch to the root)")
        return
    if mode == "strict":
        g.wait_console(rb"daxprobe\.mode=strict: stopping the boot", 600)
        timed("QEMU start -> strict stop", t0)
        con = g.console_text()
        c.check("daxprobe: PROBLEM: problems_found (mode strict)" in con,
                "strict: the verdict on the console")
        c.check(f"daxprobe: remedy: {REMEDY}" in con, "strict: the remedy on the console")
        # initramfs-tools' panic: a rescue shell, or a reboot with panic=N
        # (QEMU -no-reboot exits). Either way systemd never starts.
        g.wait_console(rb"\(initramfs\)|Rebooting|reboot: Restarting", 120)
        con = g.console_text()  # after the stop: what came before it is all there is
        c.check("systemd[1]" not in con and "Welcome to" not in con,
                "strict: the boot stopped before systemd")
        return
    check_warn_boot(c, g)


def check_warn_boot(c, g):
    """The hook in warn mode on a root where DAX is silently off."""
    t0 = time.monotonic()
    took = g.connect_shell(timeout=600)
    timed(f"QEMU start -> guest shell ({took:.1f} s)", t0)
    _, kmsg = g.sh("dmesg")
    lines = [l for l in kmsg.splitlines() if "daxprobe:" in l]
    log("\n".join(lines))
    c.check(any("PROBLEM: problems_found (mode warn)" in l for l in lines),
            "warn: the verdict in the kernel log")
    c.check(any(f"remedy: {REMEDY}" in l for l in lines), "warn: the remedy in the kernel log")
    c.check("Unknown symbol" not in kmsg, "no 'Unknown symbol' in the kernel log (libnvdimm in the initramfs)",
            "\n".join(l for l in kmsg.splitlines() if "Unknown symbol" in l)[:800])
    _, mnt = g.sh("findmnt -no SOURCE,FSTYPE,OPTIONS /")
    c.check(mnt.startswith("/dev/pmem0 xfs"), f"root is XFS on /dev/pmem0: {mnt.strip()}")
    c.check("dax=always" not in mnt, "and DAX is really off (the case the hook exists for)")
    _, pid1 = g.sh("cat /proc/1/comm")
    c.eq(pid1.strip(), "systemd", "warn: the boot went on to systemd")


def scenario_strict_dax(c, g, collector_lifecycle):
    """strict on a root that really is DAX: the boot goes on."""
    t0 = time.monotonic()
    took = g.connect_shell(timeout=600)
    timed(f"QEMU start -> guest shell ({took:.1f} s)", t0)
    _, pid1 = g.sh("cat /proc/1/comm")
    c.eq(pid1.strip(), "systemd", "strict on a DAX root: the boot went on to systemd")
    _, mnt = g.sh("findmnt -no SOURCE,FSTYPE,OPTIONS /")
    c.check(mnt.startswith("/dev/pmem0 xfs") and "dax=always" in mnt,
            f"the kernel mounted the root XFS on /dev/pmem0 with dax=always: {mnt.strip()}")
    _, qdax = g.sh("cat /sys/block/pmem0/queue/dax")
    c.eq(qdax.strip(), "1", "the kernel: /sys/block/pmem0/queue/dax")
    # fsdax: a pfn device (the info block) has claimed the namespace.
    _, pfn = g.sh("for d in /sys/bus/nd/devices/pfn*; do "
                  "ns=$(cat $d/namespace); [ -n \"$ns\" ] && echo ${d##*/} $ns; done")
    c.check(len(pfn.split()) == 2 and pfn.split()[1].startswith("namespace"),
            f"sysfs: the namespace is claimed by a pfn device (fsdax): {pfn.strip()!r}")
    # The journal took "daxprobe:" as the kernel-log line's identifier.
    _, kmsg = g.sh("journalctl -k -b -t daxprobe -o cat --no-pager")
    lines = kmsg.splitlines()
    log("\n".join(lines))
    c.check(lines == ["DAX verified (mode strict)"],
            "the kernel log in the journal (journalctl -k -t daxprobe): the hook's verdict "
            "OK in strict mode, nothing else", kmsg)
    if collector_lifecycle:
        check_collector_lifecycle(c, g)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--image-dir", required=True)
    ap.add_argument("--scenario", required=True,
                    choices=["services", "initramfs-strict",
                             "initramfs-strict-dax", "dracut-warn", "dracut-strict"])
    ap.add_argument("--collector-lifecycle", action="store_true",
                    help="initramfs-strict-dax: also install, upgrade, remove, purge "
                         "daxprobe-collector (a .deb built for this release)")
    ap.add_argument("--collector", help="daxprobe-collector (services)")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--skip-reason")
    args = ap.parse_args()
    t_all = time.monotonic()
    try:
        if args.skip_reason:
            raise Skip(args.skip_reason)
        info = image_inputs(args.image_dir)
        log(f"image: {info['suite']}, kernel {info['kernel']}, daxprobe "
            f"{info['packages'].get('daxprobe')}, systemd {info['packages'].get('systemd')}")
        c = Checks()
        if args.scenario == "services":
            if not args.collector or not os.path.exists(args.collector):
                raise Skip("daxprobe-collector was not built")
            guest = SystemdGuest(args.image_dir, "services", root="pmem",
                                 cmdline="daxprobe.mode=warn", keep=args.keep)
            with guest as g:
                try:
                    scenario_services(c, g, args.collector, args.image_dir, info)
                finally:
                    log(f"console: {g.console_path}" if args.keep else "")
        elif args.scenario == "initramfs-strict-dax":
            if args.collector_lifecycle and info.get("collector_unavailable"):
                raise GuestError("daxprobe-collector cannot be installed in this image: "
                                 + info["collector_unavailable"])
            guest = SystemdGuest(args.image_dir, args.scenario, root="pmem-fsdax",
                                 cmdline="daxprobe.mode=strict", agent_port=False,
                                 keep=args.keep)
            with guest as g:
                scenario_strict_dax(c, g, args.collector_lifecycle)
        else:
            mode = args.scenario.split("-")[1]
            guest = SystemdGuest(args.image_dir, args.scenario, root="pmem",
                                 cmdline=f"daxprobe.mode={mode}", agent_port=False,
                                 keep=args.keep)
            with guest as g:
                scenario_initramfs(c, g, mode, args.image_dir, info)
    except Skip as e:
        log(f"SKIP: {e}")
        return 77
    except (GuestError, RuntimeError) as e:
        log(f"FAIL: {e}")
        tail = guest.console_text()[-4000:] if "guest" in locals() else ""
        log("--- console (tail) ---\n" + tail)
        return 1
    timed(f"{args.scenario} total", t_all)
    if c.failures:
        log("--- console (tail) ---\n" + guest.console_text()[-3000:])
        log(f"{c.failures} check(s) failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
