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
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from collector_scenario import CollectorProc  # noqa: E402
from systemd_guest import SystemdGuest, image_inputs  # noqa: E402
from vmharness import GuestError, Skip  # noqa: E402

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
    _, warn = g.sh("journalctl -b -u daxprobe-check.service -p warning -o cat --no-pager")
    c.check("FAIL" in warn and "device_cannot_dax" in warn,
            "journalctl -p warning shows the check's problem", warn)
    c.check(REMEDY in warn, "journalctl -p warning shows its remedy", warn)
    _, err = g.sh("journalctl -b -u daxprobe-check.service -p err -o cat --no-pager")
    c.check("problems_found" in err, "the overall verdict at priority err", err)
    _, allp = g.sh("journalctl -b -u daxprobe-check.service -o verbose --no-pager "
                   "| grep -E '^ *PRIORITY=' | sort | uniq -c")
    c.check("PRIORITY=6" in allp and "PRIORITY=3" in allp, f"priorities 3 and 6 both used: {allp.split()}")
    _, perf = g.sh("journalctl -b -u daxprobe-check.service -o cat --no-pager | grep 'perf counters'")
    _, paranoid = g.sh("cat /proc/sys/kernel/perf_event_paranoid")
    log(f"perf_event_paranoid={paranoid.strip()}; {perf.strip()}")
    if paranoid.strip() == "3":
        c.check("CAP_SYS_ADMIN" in perf and "perf_event_paranoid=3" in perf,
                "perf's refusal in the unit says why (paranoid 3 wants CAP_SYS_ADMIN)", perf)


def check_agent_and_hotplug(c, g, coll):
    t0 = time.monotonic()
    g.wait_unit("daxprobe-agent.service", "active")
    coll.wait_for("(start, ", 180)
    c.check(True, "the collector on the host stored the agent's start report")
    timed("agent active + first report stored", t0)
    p = g.show("daxprobe-agent.service", "ActiveState", "NRestarts", "MainPID")
    c.eq(p.get("NRestarts"), "0", "agent NRestarts at boot")
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
    c.check(True, "after install: the port exists, postinst started the agent")
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
    with tempfile.TemporaryDirectory(prefix="dxsd-coll-") as state:
        coll = CollectorProc(collector_bin, g.agent_sock, state, lambda line: None)
        try:
            check_agent_and_hotplug(c, g, coll)
            check_lifecycle(c, g, coll)
        finally:
            coll.stop()
        q = subprocess.run([collector_bin, "query", "--state-dir", state, "--vm", "guest"],
                           capture_output=True, text=True, timeout=60)
        log(q.stdout[-1500:])
        c.check("problems_found" in q.stdout, "collector query: the guest's reports stored")


# -- the collector's package ----------------------------------------------------

# What a package's life leaves behind that is not the package's: dpkg's and
# apt's own records, logs, systemd's state.
CHURN = ("/var/lib/dpkg/", "/var/lib/apt/", "/var/cache/", "/var/log/", "/var/lib/systemd/",
         "/tmp/", "/var/tmp/", "/root/")


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
    # /var/lib/private itself is systemd's (made for any DynamicUser service).
    left = sorted(p for p in tree(g) - before
                  if not p.startswith(CHURN) and p != "/var/lib/private")
    c.eq(left, [], "after purge: nothing the collector added is left")
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
        m = g.wait_console(rb"daxprobe\.mode=strict: stopping the boot", 600)
        timed("QEMU start -> strict stop", t0)
        con = g.console_text()
        c.check("daxprobe: PROBLEM: problems_found (mode strict)" in con,
                "strict: the verdict on the console")
        c.check(f"daxprobe: remedy: {REMEDY}" in con, "strict: the remedy on the console")
        # initramfs-tools' panic: a rescue shell, or a reboot with panic=N
        # (QEMU -no-reboot exits). Either way systemd never starts.
        g.wait_console(rb"\(initramfs\)|Rebooting|reboot: Restarting", 120)
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
    except GuestError as e:
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
