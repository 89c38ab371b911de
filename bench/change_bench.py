#!/usr/bin/env python3
"""A change in the guest to the collector storing the changed report.

  PYTHONPATH=tests/vm bench/change_bench.py [BUILDDIR] [--changes 20] [--results-dir DIR]

One guest of the VM test bed (Debian 12's 6.1 under TCG, a 512 MiB NVDIMM,
fsdax + ext4 -o dax) runs `daxprobe agent` with no timer that could report
(bench/guest/change-bench.sh); the host runs the real `daxprobe-collector` on
its port. For each kind, N changes one after the other: a remount (dax on,
off), a bad-block injection (/sys/block/pmem0/badblocks), `ndctl
create-namespace` (devdax, fsdax) and `daxctl reconfigure-device`
(system-ram, devdax). Both ends on the host's clock: the host asks the
guest to run the command (t_ask), sees its end on the console (t_end), and
timestamps the collector's log line of the first stored report that shows
the new state (t_stored; checked with `query`).

The floor, in the same guest and run: bench/change_floor.cpp listens on the
agent's kernel signals (uevents, mountinfo's POLLPRI, the badblocks file read
every 10 ms) and writes one line per change of the same state on a port of
its own, org.daxprobe.floor; the host timestamps the first line that shows
the new state (t_floor). Per kind:
  from the floor    t_stored - t_floor: the delay daxprobe adds once the
                    kernel's change is visible to the fastest watcher
                    (goal: p99 <= 1 s)
  asked to stored   t_stored - t_ask, against the floor's t_floor - t_ask
                    (the ratio); both include the request's delivery and the
                    command's own run under TCG
  command end       t_stored - t_end: a lower bound only (the console line
                    can arrive after the report)
The floor's own delay (its wake, read, write and the port's delivery) is
estimated by half an echo round trip on its port after each change.
Exit 0 (numbers produced), 1 (failed), 77 (cannot run here, reason printed).
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

import result_file
from collector_scenario import CollectorProc
from harness import images, mkinitramfs
from harness.guest import Guest, GuestError, Skip

HERE = os.path.dirname(os.path.abspath(__file__))


def _mount(rep):
    return next((m for m in rep.get("mounts") or [] if m.get("mount_point") == "/mnt/pmem"), {})


def _ns(rep):
    return next((n for n in rep.get("namespaces") or [] if n.get("dev") == "namespace0.0"), {})


def _dax(rep):
    return next((d for d in rep.get("dax_devices") or [] if d.get("chardev") == "dax0.0"), {})


# kind: i -> what the floor's state line must show after change i
# (bench/change_floor.cpp: mount, ns, dax, bb).
FLOOR = {
    "remount": lambda i: lambda s: s.get("mount") == ("dax" if i % 2 else "nodax"),
    "badblocks": lambda i: lambda s: s.get("bb") == str(8 * (i + 1)),
    "namespace": lambda i: lambda s: s.get("ns") == ("fsdax" if i % 2 else "devdax"),
    "daxctl": lambda i: lambda s: s.get("dax") == ("device_dax" if i % 2 else "kmem"),
}

FLOOR_PORT = "org.daxprobe.floor"


# kind: i -> what the stored report must show after change i.
KINDS = {
    "remount": lambda i: lambda r: (_mount(r).get("verdict") or {}).get("code")
    == ("dax_active" if i % 2 else "dax_not_requested"),
    "badblocks": lambda i: lambda r: _ns(r).get("badblock_count") == 8 * (i + 1),
    "namespace": lambda i: lambda r: _ns(r).get("mode") == ("fsdax" if i % 2 else "devdax"),
    "daxctl": lambda i: lambda r: _dax(r).get("mode") == ("devdax" if i % 2 else "system-ram"),
}


class TimedCollector(CollectorProc):
    """The collector, each log line with the host's monotonic time it arrived."""

    def __init__(self, *args):
        self.times = []
        super().__init__(*args)

    def _read(self, log):
        for line in self.proc.stderr:
            if not line.endswith("\n"):
                break
            with self.cond:
                self.times.append(time.monotonic())
                self.lines.append(line)
                self.cond.notify_all()
        with self.cond:
            self.eof = True
            self.cond.notify_all()


class FloorPort:
    """The floor's port: each line with the host's monotonic time it arrived."""

    def __init__(self, sock):
        self.sock = sock
        self.cond = threading.Condition()
        self.lines = []  # (arrival, text)
        self.eof = False
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        buf = b""
        while True:
            try:
                chunk = self.sock.recv(65536)
            except OSError:
                chunk = b""
            t = time.monotonic()
            with self.cond:
                if not chunk:
                    self.eof = True
                    self.cond.notify_all()
                    return
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    self.lines.append((t, line.decode(errors="replace")))
                self.cond.notify_all()

    def wait_line(self, after, want, timeout):
        """The first (arrival, text) after index `after` for which want(text)
        holds, and its index; woken by the reader, never a timer."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for k in range(after, len(self.lines)):
                    if want(self.lines[k][1]):
                        return k, self.lines[k]
                after = len(self.lines)
                if self.eof or not self.cond.wait(max(0.0, deadline - time.monotonic())):
                    raise GuestError(f"the floor showed no such line within {timeout} s "
                                     f"(last: {self.lines[-1][1] if self.lines else None})")

    def close(self):
        try:
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the reader's recv
        except OSError:
            pass
        self.sock.close()
        self.thread.join(5)

    def mark(self):
        with self.cond:
            return len(self.lines)

    def state(self, after, shows, timeout):
        """Host time of the first state line after index `after` that shows."""
        def want(text):
            if not text.startswith("state "):
                return False
            return shows(dict(kv.split("=", 1) for kv in text.split()[1:] if "=" in kv))
        return self.wait_line(after, want, timeout)[1][0]

    def echo_ms(self, n, timeout):
        """One ping's round trip through the floor program, in ms."""
        mark = self.mark()
        t = time.monotonic()
        self.sock.sendall(f"ping {n}\n".encode())
        return (self.wait_line(mark, lambda l: l == f"pong {n}", timeout)[1][0] - t) * 1000


def latest(binary, state, n):
    q = subprocess.run([binary, "query", "--state-dir", state, "--json", "--vm", "guest",
                        "--limit", str(n)], capture_output=True, text=True, timeout=60)
    return json.loads(q.stdout or "{}").get("reports", [])


def wait_stored(coll, binary, state, after_seq, shows, timeout):
    """(host time of the stored line, seq) of the first report after after_seq
    that shows the change; woken by the collector's lines, never a timer."""
    deadline = time.monotonic() + timeout
    seen = 0
    while True:
        with coll.cond:
            coll.cond.wait_for(lambda: len(coll.lines) > seen or coll.eof,
                               max(0.0, deadline - time.monotonic()))
            lines, times = list(coll.lines), list(coll.times)
        seen = len(lines)
        for r in sorted(latest(binary, state, 8), key=lambda r: r.get("seq", 0)):
            if r.get("seq", 0) > after_seq and shows(r.get("report") or {}):
                # The line that logged this seq: its arrival is t_stored.
                tag = f"/{r['seq']} ("
                at = next((t for l, t in zip(lines, times) if tag in l), None)
                if at is not None:
                    return at, r["seq"]
        if coll.eof or time.monotonic() > deadline:
            raise GuestError(f"no stored report showed the change within {timeout} s")


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(p / 100 * len(xs) + 0.5) - 1))]


def run(args):
    vm_dir = os.path.join(args.builddir, "tests", "vm")
    info, _ = images.guest_inputs(vm_dir)
    deb = mkinitramfs.find_guest_deb(os.path.join(args.builddir, "deb"))
    out = os.path.abspath(os.path.join(args.builddir, "change-bench"))
    os.makedirs(out, exist_ok=True)
    base = os.path.join(out, "initramfs-base.cpio")
    mkinitramfs.build(info, deb, images.GUEST_DIR, base)
    floor = os.path.join(args.builddir, "bench", "change_floor")
    if not os.path.exists(floor):
        raise Skip(f"{floor} not built (meson compile -C {args.builddir})")
    extra = mkinitramfs.Image()
    mkinitramfs.add_dynamic(extra, "/usr/bin/change_floor", floor)
    extra.add_file("/daxprobe-vm/scenarios/change-bench.sh",
                   os.path.join(HERE, "guest", "change-bench.sh"), 0o644)
    extra.write(os.path.join(out, "initramfs-extra.cpio"))
    initrd = os.path.join(out, "initramfs-change-bench.cpio")
    with open(initrd, "wb") as f:
        for part in (base, os.path.join(out, "initramfs-extra.cpio")):
            with open(part, "rb") as p:
                f.write(p.read())
    g = Guest(info["vmlinux"], initrd, "change-bench", extra_ports=[FLOOR_PORT])
    # collector_binary() finds BUILD from a test's initramfs (BUILD/tests/vm),
    # not from this one (BUILD/change-bench).
    binary = os.environ.get("DAXPROBE_COLLECTOR",
                            os.path.join(args.builddir, "collector", "daxprobe-collector"))
    rec = {k: {"from_end": [], "from_ask": [], "floor_from_ask": [], "from_floor": [],
               "failed": 0} for k in KINDS}
    echo = []
    with g, tempfile.TemporaryDirectory(prefix="dxcoll-") as state:
        coll = TimedCollector(binary, g.agent_sock, state, lambda m: None)
        fp = FloorPort(g.connect_port(FLOOR_PORT, args.timeout))
        try:
            g.wait_console("BENCH-AGENT-STARTED", 1, args.timeout)
            coll.wait_for("/1 (", args.timeout)
            for kind, target in KINDS.items():
                if kind == "daxctl":
                    g.tell_guest("devdax 0")
                    g.wait_console_match(rb"BENCH-CMD-END devdax 0 0$", args.timeout)
                    wait_stored(coll, binary, state, 0, lambda r: _ns(r).get("mode") == "devdax",
                                args.timeout)
                for i in range(args.changes):
                    before = max((r.get("seq", 0) for r in latest(binary, state, 1)), default=0)
                    mark = fp.mark()
                    t_ask = time.monotonic()
                    g.tell_guest(f"{kind} {i}")
                    m = g.wait_console_match(rf"BENCH-CMD-END {kind} {i} (\d+)$".encode(),
                                             args.timeout)
                    t_end = time.monotonic()
                    if m.group(1) != b"0":
                        rec[kind]["failed"] += 1
                        print(f"{kind} {i}: the command failed", flush=True)
                        continue
                    t_stored, seq = wait_stored(coll, binary, state, before, target(i),
                                                args.timeout)
                    t_floor = fp.state(mark, FLOOR[kind](i), args.timeout)
                    r = rec[kind]
                    r["from_end"].append(round((t_stored - t_end) * 1000, 1))
                    r["from_ask"].append(round((t_stored - t_ask) * 1000, 1))
                    r["floor_from_ask"].append(round((t_floor - t_ask) * 1000, 1))
                    r["from_floor"].append(round((t_stored - t_floor) * 1000, 1))
                    echo.append(round(fp.echo_ms(len(echo), args.timeout), 1))
                    print(f"{kind} {i}: seq {seq}, {r['from_floor'][-1]} ms after the floor, "
                          f"{r['from_end'][-1]} after the command ended, {r['from_ask'][-1]} "
                          f"after asking (the floor {r['floor_from_ask'][-1]}); echo "
                          f"{echo[-1]} ms", flush=True)
            g.tell_guest("done")
            g.wait(args.timeout)
            cpu = save_results(g, args.builddir)
        finally:
            coll.stop()
            fp.close()
    return rec, echo, cpu


def save_results(g, builddir):
    """The guest's logs (the agent's "change noticed" lines) beside the
    build's run folder, for finding where the time went."""
    out = os.path.join(builddir, "change-bench", "results")
    os.makedirs(out, exist_ok=True)
    files = g.results()
    for name, data in files.items():
        if "/" not in name:
            with open(os.path.join(out, name), "wb") as f:
                f.write(data)
    print(f"guest logs: {out}", flush=True)
    return files.get("cpu.txt", b"").decode().strip().replace("\n", ", ")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("builddir", nargs="?", default="build")
    ap.add_argument("--changes", type=int, default=20)
    ap.add_argument("--timeout", type=float, default=240)
    ap.add_argument("--results-dir")
    args = ap.parse_args()
    try:
        load = os.getloadavg()[0]
        rec, echo, cpu = run(args)
    except Skip as e:
        print(f"SKIP: {e}")
        return 77
    except GuestError as e:
        print(f"FAIL: {e}")
        return 1
    figures = []
    for kind, r in rec.items():
        if not r["from_end"]:
            print(f"FAIL: {kind}: no change measured")
            return 1
        for p in (50, 99):
            figures.append(result_file.figure(
                f"{kind} p{p}, the floor's line to stored (the delay daxprobe adds)", "ms",
                pct(r["from_floor"], p), None, None, None, None, "<= 1000 ms"))
        for p in (50, 99):
            # The ratio of the two percentiles over the same changes.
            d, f = pct(r["from_ask"], p), pct(r["floor_from_ask"], p)
            figures.append(result_file.figure(
                f"{kind} p{p}, asked to stored (upper bound: the command's run included)",
                "ms", d, f"{kind} p{p}, asked to the floor's line", f,
                result_file.ratio(d, f), "daxprobe / floor"))
        for p in (50, 99):
            figures.append(result_file.figure(
                f"{kind} p{p}, command end on the console to stored (lower bound)", "ms",
                pct(r["from_end"], p), None, None, None, None))
    for p in (50, 99):
        figures.append(result_file.figure(
            f"the floor's own delivery p{p}, half an echo round trip on its port", "ms",
            round(pct(echo, p) / 2, 1), None, None, None, None))
    samples = {k: {s: r[s] for s in ("from_floor", "floor_from_ask", "from_ask", "from_end")}
               for k, r in rec.items()}
    result_file.write(
        "change-latency", figures, results_dir=args.results_dir,
        conditions=f"load {load:.1f} at the start, TCG, one vCPU; {args.changes} changes per kind; "
        f"commands failed: { {k: r['failed'] for k, r in rec.items()} }; samples (ms): "
        f"{json.dumps(samples)}; floor echo round trips (ms): {echo}; guest CPU at the end "
        f"(ns; uptime s): {cpu}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
