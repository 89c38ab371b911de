"""collector-reconnect: the guest's `daxprobe agent` reports over the real
virtio-serial port to the real `daxprobe-collector`, which is stopped and
started again in the middle (see guest/scenarios/collector-reconnect.sh)."""

import os
import subprocess
import tempfile
import threading
import time


def collector_binary(guest):
    # initramfs.cpio lives in BUILD/tests/vm; the collector in BUILD/collector.
    build = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(guest.initrd))))
    return os.environ.get("DAXPROBE_COLLECTOR", os.path.join(build, "collector", "daxprobe-collector"))


class CollectorProc:
    """daxprobe-collector run on the guest's agent socket; its log lines are
    collected by a thread and waited on with a condition (no polling)."""

    def __init__(self, binary, sock, state, log):
        self.lines = []
        self.cond = threading.Condition()
        self.eof = False
        self.proc = subprocess.Popen(
            [binary, "run", "--socket", f"guest={sock}", "--state-dir", state,
             "--metrics-listen", "", "--log-level", "debug"],  # debug: a line per stored report
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.reader = threading.Thread(target=self._read, args=(log,), daemon=True)
        self.reader.start()

    def _read(self, log):
        for line in self.proc.stderr:
            if not line.endswith("\n"):
                break  # a piece cut off by the collector's exit is not a line
            log("[collector] " + line.rstrip())
            with self.cond:
                self.lines.append(line)
                self.cond.notify_all()
        with self.cond:
            self.eof = True
            self.cond.notify_all()

    def wait_for(self, text, timeout):
        deadline = time.monotonic() + timeout
        with self.cond:
            while not any(text in l for l in self.lines):
                left = deadline - time.monotonic()
                if self.eof or left <= 0:
                    raise RuntimeError(f"collector: {text!r} not logged "
                                       f"({'exited' if self.eof else f'{timeout} s'})")
                self.cond.wait(left)

    def stop(self):
        self.proc.terminate()
        rc = self.proc.wait(timeout=30)
        self.reader.join(timeout=10)
        return rc


def collector_reconnect_host(guest, log):
    t = 180
    binary = collector_binary(guest)
    out = {}
    with tempfile.TemporaryDirectory(prefix="dxcoll-") as state:
        started = []  # a failure below must not leave a collector running
        try:
            c1 = CollectorProc(binary, guest.agent_sock, state, log)
            started.append(c1)
            c1.wait_for("/1 (", t)
            out["collector1.rc"] = c1.stop()
            log("[collector-reconnect] collector 1 stored the start report and stopped")
            m = guest.wait_console_match(rb"DAXPROBE-AWAY-REPORTS last=(\d+)$", t)
            last = int(m.group(1))
            out["away_last_seq"] = last
            c2 = CollectorProc(binary, guest.agent_sock, state, log)
            started.append(c2)
            c2.wait_for(f"/{last} (", t)
            c2.wait_for("(change, problems_found)", t)
            out["collector2.rc"] = c2.stop()
            log(f"[collector-reconnect] collector 2 received the queued reports up to {last}")
            out["collector.log"] = "".join(c1.lines + c2.lines)
            for name, args in (("query.json", ["--json"]),
                               ("history.json", ["--json", "--vm", "guest", "--limit", "1000"]),
                               ("query.txt", []), ("history.txt", ["--vm", "guest"])):
                q = subprocess.run([binary, "query", "--state-dir", state] + args,
                                   capture_output=True, text=True, timeout=60)
                out[name] = q.stdout
                out[name + ".rc"] = q.returncode
        finally:
            for c in started:
                if c.proc.poll() is None:
                    c.proc.kill()
                    c.proc.wait()
    return out


def check_collector_reconnect(c, res):
    from scenarios import expect_document, expect_dax_active  # scenarios imports this module
    c.eq(res.text("host/collector1.rc").strip(), "0", "collector 1 exit code (SIGTERM: clean)")
    c.eq(res.text("host/collector2.rc").strip(), "0", "collector 2 exit code")
    q = res.json("host/query.json")
    h = res.json("host/history.json")
    if not c.check(q is not None and h is not None, "query outputs parse as JSON"):
        return
    vms = q.get("vms", [])
    if not c.eq(len(vms), 1, "one VM in the store"):
        return
    vm = vms[0]
    last = int(res.text("host/away_last_seq").strip() or 0)
    c.eq(vm.get("vm"), "guest", "VM key is the host's channel name")
    c.eq(vm.get("verdict"), "problems_found", "latest verdict per query (after the remount without DAX)")
    c.check(last >= 3, f"reports queued while no host was connected (last seq {last})")
    c.check(vm.get("seq", 0) >= last, f"latest seq {vm.get('seq')} >= {last}")
    reps = h.get("reports", [])
    seqs = [r.get("seq") for r in reps]
    c.eq(seqs, list(range(len(reps), 0, -1)), "history: every seq from 1, once, newest first")
    c.eq(vm.get("reports_stored"), len(reps), "reports stored = history length (no duplicates)")
    c.eq(vm.get("reports_stored"), vm.get("seq"), "reports stored = last seq (none lost)")
    c.eq(vm.get("agent_dropped_reports"), 0, "the agent dropped nothing")
    c.eq(len({r.get("stream") for r in reps}), 1, "one agent stream")
    # The umount alone may be reported first (its own change); the remount
    # without DAX must be reported as a change with the new verdict.
    changed = [r for r in reps if r.get("reason") == "change"]
    nodax = [r for r in changed if r.get("verdict") == "problems_found"]
    if c.check(bool(nodax), f"a 'change' report with verdict problems_found: {[(r['seq'], r['verdict']) for r in changed]}"):
        m = [x for x in (nodax[0].get("report") or {}).get("mounts", [])
             if x.get("mount_point") == "/mnt/pmem"]
        c.check(bool(m) and (m[0].get("verdict") or {}).get("code") == "dax_not_requested",
                "the change report's mount verdict is dax_not_requested")
        first = min(r.get("seq", 0) for r in changed)
        c.check(all(r.get("verdict") == "dax_verified" for r in reps if r.get("seq", 0) < first),
                "every report before the remount says dax_verified")
    if before_change := [r for r in reps if r.get("reason") == "start"]:
        m = [x for x in (before_change[0].get("report") or {}).get("mounts", [])
             if x.get("mount_point") == "/mnt/pmem"]
        c.check(bool(m) and (m[0].get("verdict") or {}).get("code") == "dax_active",
                "the start report carries the guest's mount verdict (dax_active)")
    if reps:
        c.eq(reps[-1].get("reason"), "start", "first report's reason")
    log = res.text("agent.log")
    c.eq(log.count("host disconnected"), 2, "agent saw both collectors go")
    c.check(log.count("host away") >= 2, "reports were queued while no host was connected")
    if expect_document(c, res, 0, "dax_verified"):
        expect_dax_active(c, res)


def host_facts(guest, log, backing):
    """The real collector on the guest's agent socket: once it stored the
    start report it has read QEMU's host facts; `query --json` shows them.
    The guest runs its agent in scenario_after and waits for "done"
    (guest/init: wait_host); `backing` (host paths) goes to the checks."""
    binary = collector_binary(guest)
    out = {}
    # The collector reads host facts when it connects, then every 30 s. QEMU
    # opens its chardev sockets before it maps the memory backends, so a
    # collector connected at QEMU's start may see no backing file yet: connect
    # once the guest runs its scenario (QEMU long set up by then).
    guest.wait_console("DAXPROBE-STEP after", 1, 180)
    with tempfile.TemporaryDirectory(prefix="dxcoll-") as state:
        coll = CollectorProc(binary, guest.agent_sock, state, log)
        try:
            coll.wait_for("/1 (", 180)
            # Host facts are read within a staggered spread after connecting.
            coll.wait_for("host facts stored", 180)
            q = subprocess.run([binary, "query", "--state-dir", state, "--json"],
                               capture_output=True, text=True, timeout=60)
            out["query.json"] = q.stdout
            out["backing"] = "".join(f"{path}\n" for path in backing)
        finally:
            out["collector.rc"] = coll.stop()
            guest.tell_guest("done")
    return out


def host_backends(res):
    """The collector's host facts for the one VM: (pmem backends, backing
    files), from host/query.json; None when the query holds no single VM."""
    q = res.json("host/query.json")
    vms = (q or {}).get("vms") or []
    if len(vms) != 1:
        return None
    host = vms[0].get("host") or {}
    return host.get("nvdimm_backends") or [], host.get("backing_files") or []
