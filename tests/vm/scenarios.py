"""The VM scenarios: how each guest is set up, and what the host asserts.

A scenario is
  - a guest snippet, tests/vm/guest/scenarios/NAME.sh, defining
    scenario_prepare (and optionally scenario_after), sourced by /init;
  - an entry in SCENARIOS below: QEMU options and a host-side check function
    that receives the shipped results and records failures on a Checker;
  - its name in the `vm_scenarios` list of tests/vm/meson.build.
See tests/vm/README.md.
"""

import json

import badblocks_checks
import change_checks
import collector_scenario
import cost_checks
import cxl_checks
import erofs_checks
import evidence_checks
import kata_checks
import mce_checks
import nfit_ars_checks
import nfit_checks
import nfit_modes_checks
import package_checks
import pmd_layout_checks
import verdict_checks
import virtiofs_checks
from harness import cxl_topology
from workload_checks import (expect_exercise_dax, expect_exercise_page_cache,
                             expect_profile_cmd, expect_profile_dd)

MiB = 1 << 20


class Checker:
    def __init__(self):
        self.failures = []
        self.notes = []

    def check(self, cond, what):
        if not cond:
            self.failures.append(what)
        return cond

    def eq(self, got, want, what):
        return self.check(got == want, f"{what}: got {got!r}, want {want!r}")

    def note(self, what):
        self.notes.append(what)


class Results:
    """The files the guest shipped, decoded."""

    def __init__(self, files, live=False):
        self.files = files
        # A guest just run, not a fixture captured before the guest recorded
        # everything the checks read now.
        self.live = live

    def text(self, name, default=""):
        b = self.files.get(name)
        return b.decode(errors="replace") if b is not None else default

    def json(self, name):
        t = self.text(name).strip()
        if not t:
            return None
        try:
            return json.loads(t)
        except ValueError:
            return None

    def rc(self, name):
        t = self.text(name).strip()
        return int(t) if t.lstrip("-").isdigit() else None

    def kv(self, name):
        out = {}
        for line in self.text(name).splitlines():
            if "=" in line:
                k, v = line.split("=", 1)
                out[k] = v
        return out

    @property
    def check(self):
        return self.json("check.json")


# -- helpers over the daxprobe.check/1 document ---------------------------------

def pmem_mount(doc, mount_point="/mnt/pmem"):
    for m in (doc or {}).get("mounts") or []:
        if m.get("mount_point") == mount_point:
            return m
    return None


def namespaces(doc):
    return (doc or {}).get("namespaces") or []


def file_entry(doc, path):
    for f in (doc or {}).get("files") or []:
        if f.get("path") == path:
            return f
    return None


def verdict_code(obj):
    v = (obj or {}).get("verdict")
    return v.get("code") if isinstance(v, dict) else None


def evidence_text(obj):
    v = (obj or {}).get("verdict") or {}
    ev = v.get("evidence") or []
    parts = [json.dumps(e) if not isinstance(e, str) else e for e in ev]
    parts += [str(x) for x in (obj or {}).get("kmsg") or []]
    return "\n".join(parts)


def remedy_text(obj):
    v = (obj or {}).get("verdict") or {}
    r = v.get("remedy")
    return r if isinstance(r, str) else json.dumps(r)


# -- the reference: ndctl list -BRN ---------------------------------------------

def ndctl_objects(listing):
    """Regions and namespaces from `ndctl list -BRN` (object or array)."""
    regions, nss = [], []
    if listing is None:
        return regions, nss
    buses = listing if isinstance(listing, list) else [listing]
    for bus in buses:
        for r in bus.get("regions", []) if isinstance(bus, dict) else []:
            regions.append(r)
            for n in r.get("namespaces", []):
                nss.append(dict(n, region=r.get("dev")))
    return regions, nss


# Must be reported and equal whenever ndctl reports them; the other fields are
# compared when both sides report them (an omission is only noted).
REQUIRED_FIELDS = ("dev", "mode", "size", "align")


def compare_field(c, what, field, ref, got):
    if field not in ref:
        return
    if field in REQUIRED_FIELDS or got.get(field) is not None:
        c.eq(got.get(field), ref[field], f"{what} {field} vs ndctl")
    else:
        c.note(f"{what}: ndctl reports {field}={ref[field]!r}, daxprobe does not")


def compare_with_ndctl(c, res):
    doc = res.check
    listing = res.json("ndctl-list.json")
    regions, nss = ndctl_objects(listing)
    got_regions = {r.get("dev"): r for r in (doc or {}).get("regions") or []}
    got_nss = {n.get("dev"): n for n in namespaces(doc)}
    for r in regions:
        g = got_regions.get(r["dev"])
        if not c.check(g is not None, f"region {r['dev']} (ndctl) missing from daxprobe"):
            continue
        for field in REQUIRED_FIELDS + ("type", "available_size", "persistence_domain"):
            compare_field(c, f"region {r['dev']}", field, r, g)
    for n in nss:
        g = got_nss.get(n["dev"])
        if not c.check(g is not None, f"namespace {n['dev']} (ndctl) missing from daxprobe"):
            continue
        for field in REQUIRED_FIELDS + ("map", "uuid", "blockdev", "chardev", "region"):
            compare_field(c, f"namespace {n['dev']}", field, n, g)
    # Anything daxprobe reports with a size that ndctl does not know is wrong.
    known = {n["dev"] for n in nss}
    for dev, g in got_nss.items():
        if dev not in known and (g.get("size") or 0) > 0:
            c.check(False, f"namespace {dev} reported by daxprobe but not by ndctl")
    known_r = {r["dev"] for r in regions}
    for dev in got_regions:
        c.check(dev in known_r, f"region {dev} reported by daxprobe but not by ndctl")


# -- common assertions ------------------------------------------------------------

def expect_document(c, res, exit_code, verdict=None):
    doc = res.check
    if not c.check(doc is not None, "check.json is not one JSON document:\n"
                   + res.text("check.json")[:2000]):
        return False
    c.eq(doc.get("schema"), "daxprobe.check/1", "schema")
    c.eq(res.rc("check.rc"), exit_code, "daxprobe exit code")
    c.eq(doc.get("exit_code"), res.rc("check.rc"), "document exit_code vs process exit code")
    if verdict:
        c.eq(verdict_code(doc), verdict, "top-level verdict.code")
    return True


def expect_mount_verdict(c, res, code, severity=None):
    """The /mnt/pmem mount's verdict code (and severity): the mount's entry,
    or None when the report has none."""
    m = pmem_mount(res.check)
    if not c.check(m is not None, "no mount entry for /mnt/pmem"):
        return None
    c.eq(verdict_code(m), code, "mount verdict")
    if severity:
        c.eq((m.get("verdict") or {}).get("severity"), severity, "mount severity")
    return m


def expect_dax_active(c, res):
    m = expect_mount_verdict(c, res, "dax_active")
    if m is None:
        return
    c.eq((m.get("map_sync") or {}).get("ok"), True, "map_sync.ok")
    c.eq((m.get("statx_dax") or {}).get("dax"), True, "statx_dax.dax")
    if "queue_dax" in m:
        c.check(m["queue_dax"] in (True, 1), f"queue_dax: {m['queue_dax']!r}")


def expect_mount_ok(c, res):
    c.eq(res.kv("mount.txt").get("rc"), "0", "the scenario's mount")


def expect_fsdax_namespace(c, res):
    nss = [n for n in namespaces(res.check) if (n.get("size") or 0) > 0]
    c.check(any(n.get("mode") == "fsdax" and verdict_code(n) == "dax_capable" for n in nss),
            f"an fsdax namespace with verdict dax_capable: {[(n.get('dev'), n.get('mode'), verdict_code(n)) for n in nss]}")


def cached_delta_kb(res):
    kv = res.kv("cached.txt")
    return int(kv["delta_kb"]) if "delta_kb" in kv else None


# -- the scenarios ----------------------------------------------------------------

def check_fsdax_ext4(c, res):
    expect_mount_ok(c, res)
    if expect_document(c, res, 0, "dax_verified"):
        expect_fsdax_namespace(c, res)
        expect_dax_active(c, res)
        f = file_entry(res.check, "/mnt/pmem/testfile")
        if c.check(f is not None, "files[] entry for --path /mnt/pmem/testfile"):
            c.eq(f.get("statx_dax"), True, "file statx_dax")
            resident = ((f.get("residency") or {}).get("resident_bytes")) or 0
            c.check(resident < 4 * MiB, f"DAX file resident_bytes {resident} < 4 MiB")
    d = cached_delta_kb(res)
    c.check(d is not None and d < 4096,
            f"reading 32 MiB on DAX leaves Cached about unchanged (delta {d} kB < 4096)")


def profile_of(c, res):
    """The one file entry of profile.json (daxprobe profile --json), or None."""
    doc = res.json("profile.json")
    c.eq(res.rc("profile.rc"), 0, "daxprobe profile exit code")
    files = (doc or {}).get("files") or []
    if not c.check(doc is not None and doc.get("schema") == "daxprobe.profile/1" and len(files) == 1,
                   "profile.json: one daxprobe.profile/1 file entry:\n" + res.text("profile.json")[:1500]):
        return None
    return files[0]


def expect_dax_profile(c, res, codes):
    f = profile_of(c, res)
    if f is None:
        return
    faults = f.get("faults") or {}
    mapping = (f.get("mapping") or {}).get("code")
    c.eq(f.get("dax"), True, "profiled file is DAX")
    c.check(mapping in codes, f"profile mapping {mapping!r} in {codes}: {f.get('mapping')}")
    pmd, pte = faults.get("dax_pmd"), faults.get("dax_pte")
    c.check(isinstance(pmd, int) and isinstance(pte, int),
            f"fs_dax tracepoints counted (dax_pmd={pmd!r}, dax_pte={pte!r}): {faults.get('tracepoint_error')}")
    if mapping == "pmd":
        # 32 MiB in 2 MiB faults: 16, or 32 when each write (a load, then a
        # store) takes a read fault on the hole and then a write fault.
        c.check(pmd in (16, 32), f"PMD faults for 32 MiB: {pmd} (want 16 or 32)")
        c.eq(pte, 0, "PTE faults on a PMD-mapped file")
    c.check(isinstance(faults.get("minor"), int), f"perf page-fault counter: {faults.get('perf_error')}")


def check_fsdax_ext4_profile(c, res):
    check_fsdax_ext4(c, res)
    # dd-written with 1 MiB writes: ext4 may place the start off the 2 MiB grid.
    expect_dax_profile(c, res, ("pmd", "fallback"))
    f = profile_of(c, res)
    if f is not None and (f.get("mapping") or {}).get("code") == "fallback":
        pmd_layout_checks.expect_fallback_cause(c, res, f, "layout")
    expect_profile_dd(c, res, dax=True)
    expect_profile_cmd(c, res, "fallback")
    expect_exercise_dax(c, res, pmd=False)


def check_fsdax_xfs(c, res):
    check_fsdax_ext4(c, res)
    expect_health_as_ndctl(c, res)
    expect_dax_profile(c, res, ("pmd",))
    expect_profile_cmd(c, res, "pmd")
    expect_exercise_dax(c, res, pmd=True)


def expect_health_as_ndctl(c, res):
    """QEMU's NVDIMM has no SMART command: `ndctl list -BDH` in the same
    guest shows its DIMM without health, and daxprobe says "not available"."""
    if "ndctl-dimms.json" not in res.files:
        # Captured before the guest listed DIMMs (fixtures); a live guest must.
        c.check(not res.live, "the guest shipped no ndctl-dimms.json")
        return
    ref = nfit_checks.ndctl_dimms(res.json("ndctl-dimms.json"))
    got = {d.get("dev"): d for d in (res.check or {}).get("dimms") or []}
    if not c.check(ref and all("health" not in d for d in ref.values()),
                   f"ndctl list -BDH: QEMU's DIMMs without health: {ref}"):
        return
    nfit_checks.compare_health(c, ref, got, "QEMU NVDIMM")
    for dev in ref:
        reason = ((got.get(dev) or {}).get("health") or {}).get("reason") or ""
        c.check(reason.startswith("not available"), f"{dev} health reason: {reason!r}")


def check_raw_xfs(c, res):
    expect_mount_ok(c, res)
    c.check("Turning off DAX" in res.text("dmesg.txt"), "kernel logged 'Turning off DAX'")
    if expect_document(c, res, 1, "problems_found"):
        m = pmem_mount(res.check)
        if c.check(m is not None, "no mount entry for /mnt/pmem"):
            c.eq(verdict_code(m), "dax_silently_off", "mount verdict")
            c.check("Turning off DAX" in evidence_text(m),
                    "mount evidence/kmsg contains 'Turning off DAX'")
            c.check("ndctl create-namespace" in remedy_text(m),
                    f"mount remedy names ndctl create-namespace: {remedy_text(m)!r}")
        raw = [n for n in namespaces(res.check) if n.get("mode") == "raw"]
        if c.check(raw, "a raw namespace"):
            c.eq(verdict_code(raw[0]), "device_cannot_dax", "raw namespace verdict")


def check_raw_ext4(c, res):
    kv = res.kv("mount.txt")
    c.check(kv.get("rc") not in (None, "0"), f"ext4 -o dax on a raw namespace must fail: {kv}")
    c.check("DAX unsupported by block device" in res.text("dmesg.txt"),
            "kernel logged 'DAX unsupported by block device'")
    if expect_document(c, res, 1, "problems_found"):
        c.check(pmem_mount(res.check) is None, "no /mnt/pmem mount (it failed)")
        raw = [n for n in namespaces(res.check) if n.get("mode") == "raw"]
        if c.check(raw, "a raw namespace"):
            c.eq(verdict_code(raw[0]), "device_cannot_dax", "raw namespace verdict")
            c.check("ndctl create-namespace -f -e namespace0.0 -m fsdax" in remedy_text(raw[0]),
                    f"raw namespace remedy: {remedy_text(raw[0])!r}")


def check_fsdax_ext4_nodax(c, res):
    expect_mount_ok(c, res)
    d = cached_delta_kb(res)
    c.check(d is not None and d >= 30 * 1024,
            f"reading 32 MiB without DAX grows Cached by ~32 MiB (delta {d} kB)")
    if expect_document(c, res, 1, "problems_found"):
        expect_fsdax_namespace(c, res)
        m = pmem_mount(res.check)
        if c.check(m is not None, "no mount entry for /mnt/pmem"):
            c.eq(verdict_code(m), "dax_not_requested", "mount verdict")
        f = file_entry(res.check, "/mnt/pmem/testfile")
        if c.check(f is not None, "files[] entry for --path /mnt/pmem/testfile"):
            resident = (f.get("residency") or {}).get("resident_bytes") or 0
            c.check(resident >= 30 * MiB, f"file resident_bytes {resident} >= 30 MiB")
            # cachestat(2) exists from 6.5 (Debian 13's 6.12), not on 6.1: mincore there.
            rel = kernel_release(res)
            if c.check(rel is not None, f"guest kernel release in uname.txt: {res.text('uname.txt')!r}"):
                want = "cachestat" if rel >= (6, 5) else "mincore"
                c.eq((f.get("residency") or {}).get("method"), want, f"residency method on {rel}")
            c.check(not f.get("statx_dax"), "file statx_dax false")
    p = profile_of(c, res)
    if p is not None:
        c.eq(p.get("dax"), False, "profiled file is not DAX")
        c.eq((p.get("mapping") or {}).get("code"), "page_cache", "profile mapping")
        c.check((p.get("faults") or {}).get("dax_pmd") in (None, 0), "no DAX PMD faults without DAX")
    expect_profile_dd(c, res, dax=False)
    expect_exercise_page_cache(c, res)


def check_devdax(c, res):
    if expect_document(c, res, 0, "dax_verified"):
        nss = [n for n in namespaces(res.check) if n.get("mode") == "devdax"]
        if c.check(nss, "a devdax namespace"):
            c.eq(nss[0].get("chardev"), "dax0.0", "devdax chardev")
            c.eq(verdict_code(nss[0]), "dax_capable", "devdax namespace verdict")
    mce_checks.check_devdax_mce(c, res)


def command_rc(log, prefix):
    """The return code /init's run() logged for the first command starting
    with `prefix` ("+ CMD", its output, "= RC"), or None. Only that command's
    own "= RC" line counts, never a later command's."""
    rc, inside = None, False
    for line in log.splitlines():
        if line.startswith("+ "):
            if inside:
                return None  # the next command began: ours logged no rc
            inside = line[2:].startswith(prefix)
        elif inside and line.startswith("= "):
            v = line[2:].strip()
            return int(v) if v.lstrip("-").isdigit() else None
    return rc


def check_labelled(c, res):
    expect_mount_ok(c, res)
    c.eq(command_rc(res.text("commands.log"), "ndctl init-labels"), 0, "ndctl init-labels exit code")
    if expect_document(c, res, 0, "dax_verified"):
        expect_fsdax_namespace(c, res)
        expect_dax_active(c, res)


def check_no_nvdimm(c, res):
    if expect_document(c, res, 1, "no_nfit"):
        c.eq((res.check.get("nfit") or {}).get("present"), False, "nfit.present")
        c.eq(res.check.get("regions") or [], [], "no regions")


def check_virtiofs(c, res):
    check_no_nvdimm(c, res)  # a guest without an NVDIMM, with a share beside
    virtiofs_checks.check_virtiofs(c, res)


# -- agent-reconnect: the host side of the virtio-serial protocol --------------

class AgentLink:
    """One connection to org.daxprobe.agent.0: JSON lines, 0xFF sentinels
    dropped (protocol/PROTOCOL.md), every read bounded."""

    def __init__(self, guest, timeout):
        import time
        self.time = time
        self.guest = guest
        self.sock = guest.connect_agent(timeout)
        self.deadline = time.monotonic() + timeout
        self.buf = b""
        self.seen = []

    def send(self, obj):
        self.sock.sendall(json.dumps(obj).encode() + b"\n")

    def next_message(self):
        while b"\n" not in self.buf:
            left = self.deadline - self.time.monotonic()
            if left <= 0 or self.guest.proc.poll() is not None:
                raise AssertionError(f"agent: no complete message (QEMU rc "
                                     f"{self.guest.proc.poll()}, buffered {self.buf[:200]!r})")
            self.sock.settimeout(min(left, 1.0))
            try:
                chunk = self.sock.recv(65536)
            except OSError:  # timeout slice: re-check QEMU and the deadline
                continue
            if not chunk:
                raise AssertionError("agent: connection closed by QEMU")
            self.buf += chunk.replace(b"\xff", b"")
        line, self.buf = self.buf.split(b"\n", 1)
        msg = json.loads(line)
        self.seen.append(msg)
        return msg

    def expect(self, pred, what):
        while True:
            m = self.next_message()
            if pred(m):
                return m

    def close(self):
        self.sock.close()


RECONNECT_BACKOFF_S = float(__import__("os").environ.get("DAXPROBE_VM_RECONNECT_BACKOFF", "1.0"))


def connect_greeted(guest, timeout, log):
    """Connect and read the greeting, as a collector does: a connection that
    QEMU drops before the greeting (see below) is retried with a doubling
    backoff until the deadline. Returns (link, greeting, dropped attempts)."""
    import time
    deadline = time.monotonic() + timeout
    backoff, dropped = RECONNECT_BACKOFF_S, 0
    while True:
        link = AgentLink(guest, max(1.0, deadline - time.monotonic()))
        try:
            return link, link.expect(lambda m: m.get("event") == "greeting", "greeting"), dropped
        except AssertionError as e:
            link.close()
            if "closed by QEMU" not in str(e) or time.monotonic() + backoff > deadline:
                raise
            dropped += 1
            log(f"[agent-reconnect] connection dropped before the greeting ({e}); "
                f"retry {dropped} in {backoff:.0f} s")
            guest.done.wait(backoff)
            backoff *= 2


def wait_agent_released(guest, connects, timeout):
    """After closing: wait until the agent logged as many disconnects as
    connects (at least `connects`; a dropped attempt may add one of each)."""
    guest.wait_console("host connected", connects, timeout)
    seen = guest.console_count("host connected")
    guest.wait_console("host disconnected", seen, timeout)


def agent_reconnect_host(guest, log):
    t = 180
    a, g1, dropped1 = connect_greeted(guest, t, log)
    r1 = a.expect(lambda m: m.get("event") == "report", "start report")
    a.send({"execute": "check", "id": 1})
    c1 = a.expect(lambda m: m.get("id") == 1, "check return")
    a.close()
    log("[agent-reconnect] connection 1: greeting, report seq "
        f"{r1['data'].get('seq')}, check; disconnecting without an ack")
    wait_agent_released(guest, 1, t)
    # A collector's reconnect backoff. Measured here (QEMU 7.2, TCG): a
    # reconnect within a few ms of the guest seeing the disconnect is, in about
    # half the runs, dropped right after connecting (the agent logs "host
    # connected" and "host disconnected" within 2 ms, the host reads EOF), and
    # from then on QEMU refuses every connect on that chardev until it exits.
    # With 1 s between close and reconnect: 12 of 12 runs clean.
    guest.done.wait(RECONNECT_BACKOFF_S)
    b, g2, dropped2 = connect_greeted(guest, t, log)
    r2 = b.expect(lambda m: m.get("event") == "report", "resent report")
    b.send({"execute": "ack", "arguments": {"stream": r2["data"]["stream"],
                                             "seq": r2["data"]["seq"]}, "id": 2})
    a2 = b.expect(lambda m: m.get("id") == 2, "ack return")
    b.send({"execute": "ping", "id": 3})
    p3 = b.expect(lambda m: m.get("id") == 3, "ping return")
    b.close()
    wait_agent_released(guest, 2, t)
    log("[agent-reconnect] connection 2: greeting, report resent, acked, ping")
    guest.done.wait(RECONNECT_BACKOFF_S)
    try:
        out = change_checks.agent_changes_host(guest, log, t)
    finally:
        guest.tell_guest("done")
    out["agent.json"] = json.dumps({"greeting1": g1, "report1": r1, "check1": c1,
                                    "greeting2": g2, "report2": r2, "ack2": a2,
                                    "ping3": p3, "dropped": dropped1 + dropped2})
    return out


def check_agent_reconnect(c, res):
    expect_mount_ok(c, res)
    a = res.json("host/agent.json")
    if not c.check(a is not None, "host actor results (host/agent.json); the agent's log:\n"
                   + res.text("agent.log")[-3000:]):
        return
    g1, g2 = a["greeting1"]["data"], a["greeting2"]["data"]
    c.check(isinstance(g1.get("protocol"), int), f"greeting protocol version: {g1.get('protocol')!r}")
    c.eq(g2.get("agent", {}).get("stream"), g1.get("agent", {}).get("stream"),
         "same stream across the reconnect (same daemon)")
    r1, r2 = a["report1"]["data"], a["report2"]["data"]
    c.eq(r1.get("reason"), "start", "first report's reason")
    c.eq((r1.get("seq"), r1.get("stream")), (r2.get("seq"), r2.get("stream")),
         "the unacknowledged report is resent after the reconnect")
    rep = r1.get("report") or {}
    c.eq(rep.get("schema"), "daxprobe.check/1", "report schema")
    c.eq(verdict_code(rep), "dax_verified", "reported verdict")
    c.eq(verdict_code(pmem_mount(rep)), "dax_active", "reported mount verdict")
    ret = a["check1"].get("return") or {}
    c.eq(ret.get("schema"), "daxprobe.check/1", "check command returns the document")
    c.eq((a["ack2"].get("return") or {}).get("acked"), 1, "ack dropped the report")
    c.check("return" in a["ping3"], f"ping returns: {a['ping3']}")
    log = res.text("agent.log")
    # A connection QEMU dropped before the greeting (retried by the actor) may
    # or may not have reached the agent; every connect it saw must end.
    # The third: the collector of the changes (change_checks).
    connects = log.count("host connected")
    c.check(3 <= connects <= 3 + a.get("dropped", 0),
            f"connects the agent logged: {connects}, want 3 plus at most "
            f"{a.get('dropped', 0)} dropped")
    c.eq(log.count("host disconnected"), connects, "disconnects the agent logged")
    c.eq(res.text("host-said.txt").split(), ["changes", "done"], "guest heard the host")
    change_checks.check_agent_changes(c, res)
    # The one-shot check in the same guest agrees.
    if expect_document(c, res, 0, "dax_verified"):
        expect_dax_active(c, res)


class Scenario:
    """name: also the guest snippet's name; check(Checker, Results): the host's
    assertions; nvdimm/label_size: the emulated DIMM; host(guest, log): an
    optional host-side actor run while the guest is up (e.g. a collector on
    guest.agent_sock), returning a dict merged into the results as
    "host/<key>" entries so check() can assert on it; timeout: seconds;
    cmdline: more guest kernel command line (e.g. daxprobe.mode=strict);
    cxl: a harness.cxl_topology.CxlTopology (a q35 machine with CXL pmem);
    provoked_warning: the source file of a kernel WARNING the scenario
    provokes on purpose (its Call Trace is then no sign of ill health)."""

    def __init__(self, name, check, nvdimm=True, label_size=None, host=None, timeout=None,
                 virtio_pmem=False, cmdline="", then=(), virtiofs_files=None, memory="512M",
                 cxl=None, provoked_warning=None, snippet=None, kata=None):
        self.name = name
        # snippet: the guest snippet's name when several scenarios share one.
        self.snippet = snippet or name
        # kata: ("nvdimm" | "virtio-pmem", dax): Kata's guest image as the
        # root (BUILD/tests/vm/kata.img, harness/kata_image.py), attached as
        # Kata's driver attaches it, the root mounted as the kernel mounts it.
        self.kata = kata
        self.cxl = cxl
        self.provoked_warning = provoked_warning
        self.memory = memory
        # {name: bytes}: a host folder shared by virtiofsd (harness.virtiofsd).
        self.virtiofs_files = virtiofs_files
        # Scenarios that run after this one in the same boot (shared boots:
        # one QEMU start instead of several); each is checked as itself over
        # its own results (/results/NAME/ in the guest). They need the same
        # QEMU options and no host actor.
        self.then = tuple(then)
        self.cmdline = cmdline
        self.virtio_pmem = virtio_pmem
        self.check = check
        self.nvdimm = nvdimm
        self.label_size = label_size
        self.host = host
        # A shared boot does several scenarios' work: twice the bound.
        self.timeout = timeout or (480 if self.then else None)

    def boot_cmdline(self):
        then = f"daxprobe.then={','.join(self.then)}" if self.then else ""
        return " ".join(w for w in (self.cmdline, then, kata_checks.kata_cmdline(self.kata))
                        if w)


SCENARIOS = {s.name: s for s in [
    # Two shared boots (`then`) for the scenarios on one plain NVDIMM: the raw
    # namespace the guest boots with first, devdax's system-ram last (it
    # cannot be undone). One boot under TCG costs 5-8 s before /init runs.
    Scenario("raw-xfs", check_raw_xfs,
             then=("raw-ext4", "mount-history-ext4", "mount-history-xfs",
                   "mount-history-fsdax", "fsdax-ext4", "fsdax-xfs", "tracefs-unmounted",
                   "perf-paranoid", "perf-user-only", "badblocks-ext4", "badblocks-xfs")),
    Scenario("raw-ext4", check_raw_ext4),
    Scenario("badblocks-ext4", badblocks_checks.check_badblocks_ext4),
    Scenario("badblocks-xfs", badblocks_checks.check_badblocks_xfs),
    Scenario("fsdax-ext4", check_fsdax_ext4_profile),
    Scenario("fsdax-xfs", check_fsdax_xfs),
    Scenario("fsdax-ext4-nodax", check_fsdax_ext4_nodax,
             then=("ext4-1k-dax", "dax-inode", "dax-inode-ext4", "erofs-dax", "devdax",
                   "devdax-system-ram")),
    Scenario("devdax", check_devdax),
    Scenario("labelled", check_labelled, label_size="128K"),
    # virtiofs shares no-nvdimm's boot: both without an NVDIMM, with the share.
    Scenario("no-nvdimm", check_no_nvdimm, nvdimm=False, then=("virtiofs",),
             virtiofs_files=virtiofs_checks.SHARED_FILES),
    Scenario("virtiofs", check_virtiofs, nvdimm=False,
             virtiofs_files=virtiofs_checks.SHARED_FILES),
    Scenario("agent-reconnect", check_agent_reconnect, host=agent_reconnect_host),
    Scenario("collector-reconnect", collector_scenario.check_collector_reconnect,
             host=collector_scenario.collector_reconnect_host),
    Scenario("mount-history-ext4", verdict_checks.check_mount_history_ext4),
    Scenario("mount-history-xfs", verdict_checks.check_mount_history_xfs),
    Scenario("mount-history-fsdax", verdict_checks.check_mount_history_fsdax),
    Scenario("dax-inode", verdict_checks.check_dax_inode),
    Scenario("dax-inode-ext4", verdict_checks.check_dax_inode),
    Scenario("erofs-dax", erofs_checks.check_erofs_dax),
    Scenario("devdax-system-ram", evidence_checks.check_devdax_system_ram),
    Scenario("ext4-1k-dax", evidence_checks.check_ext4_1k_dax),
    # The "unusable" direction of each evidence source (cachestat's: Debian
    # 12's 6.1 has none, so every --path file there).
    Scenario("tracefs-unmounted", evidence_checks.check_tracefs_unmounted),
    Scenario("perf-paranoid", evidence_checks.check_perf_paranoid),
    Scenario("perf-user-only", evidence_checks.check_perf_user_only),
    # badblocks-ext4 again where a write clears poison (no control function)
    Scenario("virtio-pmem", verdict_checks.check_virtio_pmem, nvdimm=False, virtio_pmem=True,
             then=("badblocks-virtio-pmem",)),
    Scenario("badblocks-virtio-pmem", badblocks_checks.check_badblocks_ext4, nvdimm=False,
             virtio_pmem=True),
    Scenario("virtio-pmem-nvdimm", verdict_checks.check_virtio_pmem_nvdimm, virtio_pmem=True,
             host=verdict_checks.virtio_pmem_host),
    # The kernel's NVDIMM test bus (kernel tag nfit): no QEMU NVDIMM; its
    # vmalloc()ed DIMMs need the memory.
    Scenario("nfit-test", nfit_checks.check_nfit_test, nvdimm=False, memory="1G",
             then=("nfit-ars", "nfit-modes")),
    Scenario("nfit-ars", nfit_ars_checks.check_nfit_ars, nvdimm=False, memory="1G"),
    Scenario("nfit-modes", nfit_modes_checks.check_nfit_modes, nvdimm=False, memory="1G"),
    # CXL type-3 pmem (issue 33): one shared boot per kernel, and the two
    # whose kernel command line or CPU must differ.
    Scenario("cxl", cxl_checks.check_cxl, nvdimm=False, cxl=cxl_topology.SHARED),
    Scenario("cxl-no-memdev", cxl_checks.check_cxl_no_memdev, nvdimm=False,
             cxl=cxl_topology.NO_MEMDEV),
    Scenario("cxl-no-commit", cxl_checks.check_cxl_no_commit, nvdimm=False,
             cxl=cxl_topology.NO_COMMIT, provoked_warning="drivers/cxl/core/region.c",
             host=cxl_checks.cxl_host),
    # Kata Containers' guest image (issue 44): attached as Kata's QEMU driver
    # (NVDIMM) and its Cloud Hypervisor driver (virtio-pmem, QEMU's
    # virtio-pmem-pci standing in) attach it, with and without `dax` in
    # rootflags; one snippet, kata.sh.
    Scenario("kata-nvdimm-dax", kata_checks.checker("nvdimm", True), nvdimm=False, snippet="kata",
             kata=("nvdimm", True)),
    Scenario("kata-nvdimm-nodax", kata_checks.checker("nvdimm", False), nvdimm=False, snippet="kata",
             kata=("nvdimm", False)),
    Scenario("kata-vpmem-dax", kata_checks.checker("virtio-pmem", True), nvdimm=False, snippet="kata",
             kata=("virtio-pmem", True)),
    Scenario("kata-vpmem-nodax", kata_checks.checker("virtio-pmem", False), nvdimm=False, snippet="kata",
             kata=("virtio-pmem", False)),
    Scenario("boot-hook-warn-raw", package_checks.check_boot_hook_warn_raw,
             cmdline="daxprobe.mode=warn"),
    Scenario("boot-hook-strict-raw", package_checks.check_boot_hook_strict_raw,
             cmdline="daxprobe.mode=strict"),
    Scenario("boot-hook-strict-fsdax", package_checks.check_boot_hook_strict_fsdax,
             cmdline="daxprobe.mode=strict"),
]}


def kernel_release(res):
    """(major, minor) of the guest kernel from uname.txt, or None."""
    import re
    m = re.search(r" (\d+)\.(\d+)\.", res.text("uname.txt"))
    return (int(m.group(1)), int(m.group(2))) if m else None


def expect_kernel_healthy(c, res, provoked=None):
    """No oops in the guest: on 6.12 cachestat(2) on a DAX file oopses the
    kernel (workingset_test_recent), so this is where daxprobe's guard (never
    cachestat a DAX file) is proven, in every scenario. provoked: the source
    file of a WARNING the scenario provokes; a Call Trace right after such a
    WARNING is its own."""
    log = without_warnings(res.text("dmesg.txt"), provoked) if provoked else res.text("dmesg.txt")
    for bad in ("Oops", "BUG:", "workingset_test_recent", "Call Trace"):
        c.check(bad not in log, f"guest kernel log has {bad!r}:\n{log[log.find(bad) - 500:][:1500]}")


def without_warnings(log, source):
    """The kernel log without the WARNINGs raised in `source`: each from its
    WARNING line ("WARNING: CPU: 0 PID: 1 at SOURCE:235 ..." up to 6.x,
    "WARNING: SOURCE:235 at FUNCTION ..." on 7.2) to its "---[ end trace" line."""
    out, inside = [], False
    for line in log.splitlines():
        if "WARNING:" in line and (f" at {source}:" in line or f"WARNING: {source}:" in line):
            inside = True
        if not inside:
            out.append(line)
        elif "---[ end trace" in line:
            inside = False
    return "\n".join(out)


KMSG_MARK = "daxprobe-vm: scenario "  # + NAME + " begins": /init's kmsg_mark


def expect_own_kernel_log(c, res, later):
    """In a shared boot each scenario's dmesg.txt is its own slice of the
    kernel log (/init's kmsg_since): the first one's ends before the next
    one's mark, a later one's starts at its own. Else a line an earlier
    scenario made the kernel log would pass a later one's check."""
    lines = res.text("dmesg.txt").splitlines()
    marks = [line[line.index(KMSG_MARK):] for line in lines if KMSG_MARK in line]
    c.eq(marks, [f"{KMSG_MARK}{later} begins"] if later else [],
         "scenario marks in this scenario's kernel log (its own slice of the boot's)")
    if later:
        c.check(lines and KMSG_MARK in lines[0], "a later scenario's kernel log begins at its "
                f"mark: {lines[:1]}")


def run_checks(scenario, files, live=False, later=False):
    """live: the results of a guest just run (not a fixture captured before
    the guest recorded everything checked now). later: the scenario ran after
    another in the same boot."""
    c = Checker()
    res = Results(files, live)
    c.check(not res.text("error.txt"), res.text("error.txt"))
    c.check(not res.text("host/error.txt"), res.text("host/error.txt"))
    expect_own_kernel_log(c, res, scenario.name if later else None)
    scenario.check(c, res)
    expect_kernel_healthy(c, res, scenario.provoked_warning)
    package_checks.expect_packaged_daxprobe(c, res)
    # The reference comparison applies everywhere, including no NFIT (both empty).
    if res.check is not None:
        compare_with_ndctl(c, res)
        evidence_checks.expect_dax_devices_as_daxctl(c, res, live)
        evidence_checks.expect_sources_as_kernel(c, res, live)
        cost_checks.expect_struct_pages(c, res, ndctl_objects(res.json("ndctl-list.json"))[1])
    for name in scenario.then:
        sub = sub_results(files, name)
        if not c.check(sub is not None or not live, f"[{name}] shipped no results"):
            continue
        if sub is not None:
            sc, _ = run_checks(SCENARIOS[name], sub, live, later=True)
            c.failures += [f"[{name}] {f}" for f in sc.failures]
            c.notes += [f"[{name}] {n}" for n in sc.notes]
    return c, res


def sub_results(files, name):
    """The files a shared boot's later scenario shipped (/results/NAME/...),
    with the host's own additions; None when it shipped none."""
    prefix = name + "/"
    sub = {k[len(prefix):]: v for k, v in files.items() if k.startswith(prefix)}
    if not sub:
        return None
    sub.update({k: v for k, v in files.items() if k.startswith("host/")})
    return sub
