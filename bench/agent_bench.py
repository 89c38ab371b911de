#!/usr/bin/env python3
"""The agent over a real virtio-serial port, against an echo and qemu-ga.

  PYTHONPATH=tests/vm bench/agent_bench.py [BUILDDIR] [--rounds 3] [--pings 300] [--checks 30] [--out DIR]
  PYTHONPATH=tests/vm bench/agent_bench.py --from DIR/result.json      # re-print a stored run
  PYTHONPATH=tests/vm bench/agent_bench.py --local [--no-qga]          # no VM: unix sockets, native times

One guest of the VM test bed (tests/vm: Debian 12's 6.1 kernel under QEMU,
an NVDIMM made fsdax, ext4 -o dax) with two ports: org.daxprobe.agent.0 and
org.qemu.guest_agent.0, where Debian 12's qemu-ga 7.2 runs for the whole boot
(its .deb fetched like the 6.12 kernel: a private apt configuration under
~/.cache/daxprobe-vm, never installed on the host). Per round, over the same host
connection to the agent port:
  agent phase  `daxprobe agent` starts (host already connected); its first
               report; then `ping` and qemu-ga `guest-ping` alternately, then
               `check` and `guest-get-fsinfo` alternately; the agent's memory
  echo phase   a plain echo (bench/vport_echo.cpp) on the same port: the same
               ping line, echoed; qemu-ga `guest-ping` alternately again
Times are host wall clock per round trip (TCG inflates them all: compare
ratios within one run). First report: guest CLOCK_REALTIME from the instant
before execve to the report event's timestamp (built, about to be written).
Exit 0 (numbers produced), 1 (failed), 77 (cannot run here, reason printed).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

import agent_bench_stats as stats
import result_file
from harness import guest_kernel, images, mkinitramfs
from harness.guest import Guest, GuestError, Skip

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_ROOT = os.path.dirname(HERE)

QGA_PORT = "org.qemu.guest_agent.0"
BLOCKS = 4  # ping blocks per agent phase, agent and qemu-ga alternating


def log(msg):
    print(msg, flush=True)


def fetch_qemu_ga(cache, dest):
    """Debian 12's qemu-guest-agent, unpacked into dest; returns the binary."""
    # Through the test bed's verified cache, as the guest kernels are.
    guest_kernel.APT_OPTS[:] = guest_kernel.private_apt(cache, "bookworm")
    try:
        deb = guest_kernel.fetch_deb("qemu-guest-agent", cache)
    except RuntimeError as e:
        raise Skip(f"qemu-guest-agent (bookworm): {e}")
    if os.path.exists(dest):
        shutil.rmtree(dest)
    subprocess.run(["dpkg-deb", "-x", deb, dest], check=True)
    version = subprocess.run(["dpkg-deb", "-f", deb, "Version"], capture_output=True,
                             text=True, check=True).stdout.strip()
    return os.path.join(dest, "usr", "sbin", "qemu-ga"), version


def build_initramfs(info, deb, qga, echo, out):
    """The test bed's own image (mkinitramfs.build) followed by a second newc
    archive with qemu-ga and vport_echo (each with its ldd libraries) and the
    bench's guest snippet: the kernel unpacks concatenated archives in turn."""
    base = os.path.join(out, "initramfs-base.cpio")
    mkinitramfs.build(info, deb, images.GUEST_DIR, base)
    extra = mkinitramfs.Image()
    mkinitramfs.add_dynamic(extra, "/usr/sbin/qemu-ga", qga)
    mkinitramfs.add_dynamic(extra, "/usr/bin/vport_echo", echo)
    extra.add_file("/daxprobe-vm/scenarios/agent-bench.sh",
                   os.path.join(HERE, "guest", "agent-bench.sh"), 0o644)
    extra.write(os.path.join(out, "initramfs-extra.cpio"))
    initrd = os.path.join(out, "initramfs-agent-bench.cpio")
    with open(initrd, "wb") as f:
        for part in (base, os.path.join(out, "initramfs-extra.cpio")):
            with open(part, "rb") as p:
                shutil.copyfileobj(p, f)
    return initrd


class Lines:
    """Line reader over a connected socket; drops the 0xFF sentinel."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = b""

    def line(self, deadline):
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise GuestError("no answer in time")
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(1 << 20)
            except TimeoutError:
                raise GuestError("no answer in time") from None
            if not chunk:
                raise GuestError("port closed")
            self.buf += chunk.replace(b"\xff", b"")
        line, self.buf = self.buf.split(b"\n", 1)
        return line

    def message(self, deadline, want):
        """The next JSON line for which want(msg) holds (others skipped)."""
        while True:
            raw = self.line(deadline)
            try:
                msg = json.loads(raw)
            except ValueError:
                continue
            if isinstance(msg, dict) and want(msg):
                return msg


def rtt(sock, lines, payload, want, timeout=120.0):
    """One round trip in µs (host wall clock): send payload, wait for want."""
    t0 = time.perf_counter_ns()
    sock.sendall(payload)
    msg = lines.message(time.monotonic() + timeout, want)
    return (time.perf_counter_ns() - t0) / 1000, msg


def is_return(i):
    return lambda m: m.get("id") == i and ("return" in m or "error" in m)


def qga_call(q, ql, cmd):
    _, msg = rtt(q, ql, json.dumps({"execute": cmd}).encode() + b"\n",
                 lambda m: "return" in m or "error" in m)
    if "error" in msg:
        raise GuestError(f"qemu-ga {cmd}: {msg['error']}")
    return msg


def qga_sync(q, ql, timeout):
    sid = int(time.time()) & 0x7FFFFFFF
    q.sendall(b"\xff" + json.dumps({"execute": "guest-sync", "arguments": {"id": sid}}).encode()
              + b"\n")
    ql.message(time.monotonic() + timeout, lambda m: m.get("return") == sid)


def idle_cpu(g, r, key, seconds=1.0):
    """Marks around a second in which the host sends nothing: a process that
    uses CPU here spins (the CPU per round trip must not include that)."""
    g.tell_guest(f"cpu {r} {key}_idle-start")
    time.sleep(seconds)
    g.tell_guest(f"cpu {r} {key}_idle-end")


def agent_round(g, a, al, q, ql, args, seq, r):
    """One agent phase and one echo phase; returns the round's raw readings."""
    rec = {"agent_ping": [], "qga_ping": [], "agent_check": [], "qga_fsinfo": [], "echo": [],
           "poll_echo": []}
    g.tell_guest("agent")
    rep = al.message(time.monotonic() + args.timeout, lambda m: m.get("event") == "report")
    data = rep["data"]
    rec["report"] = {"stream": data.get("stream"), "seq": data.get("seq"),
                     "reason": data.get("reason"),
                     "verdict": (data.get("report") or {}).get("verdict", {}).get("code"),
                     "timestamp": rep.get("timestamp")}
    # Acknowledged: nothing stays queued for the next phase.
    ack = {"execute": "ack", "arguments": {"stream": data["stream"], "seq": data["seq"]},
           "id": "ack"}
    rtt(a, al, json.dumps(ack).encode() + b"\n", is_return("ack"))
    idle_cpu(g, r, "agent")
    g.tell_guest(f"cpu {r} agent-start")
    sent = 0
    # Pings in blocks, agent and qemu-ga taking turns: interleaving single
    # round trips lets one agent's after-work (its loop, qemu-ga's glib loop)
    # land in the other's measurement on the guest's one vCPU.
    for b in range(BLOCKS):
        n = args.pings // BLOCKS + (args.warmup if b == 0 else 0)
        sent += n
        for i in range(n):
            seq[0] += 1
            t, msg = rtt(a, al, b'{"execute":"ping","id":%d}\n' % seq[0], is_return(seq[0]))
            if msg.get("return") != {}:
                raise GuestError(f"agent ping: {msg}")
            if b or i >= args.warmup:
                rec["agent_ping"].append(t)
        for i in range(n):
            tq, _ = rtt(q, ql, b'{"execute":"guest-ping"}\n', lambda m: "return" in m)
            if b or i >= args.warmup:
                rec["qga_ping"].append(tq)
    g.tell_guest(f"cpu {r} agent-end")
    rec["cpu_pings"] = {"agent": sent}
    for i in range(args.checks + 1):
        seq[0] += 1
        t, msg = rtt(a, al, b'{"execute":"check","id":%d}\n' % seq[0], is_return(seq[0]))
        if "error" in msg:
            raise GuestError(f"agent check: {msg['error']}")
        tq, _ = rtt(q, ql, b'{"execute":"guest-get-fsinfo"}\n', lambda m: "return" in m)
        if i >= 1:  # the first of each pays cold caches
            rec["agent_check"].append(t)
            rec["qga_fsinfo"].append(tq)
    rec["check_bytes"] = len(json.dumps(msg["return"]))
    g.tell_guest("stop-agent")
    for mode, key in (("echo", "echo"), ("poll-echo", "poll_echo")):
        g.tell_guest(mode)
        for i in range(args.warmup + args.pings):
            if i == args.warmup:  # after the warm-up: the process's start is not counted
                g.tell_guest(f"cpu {r} {key}-start")
            seq[0] += 1
            line = b'{"execute":"ping","id":%d}\n' % seq[0]
            t, _ = rtt(a, al, line, lambda m, i=seq[0]: m.get("id") == i and "execute" in m)
            if i >= args.warmup:
                rec[key].append(t)
        g.tell_guest(f"cpu {r} {key}-end")
        rec["cpu_pings"][key] = args.pings
        idle_cpu(g, r, key)
        g.tell_guest("stop-echo")
    return rec


def run(args, builddir, out):
    vm_dir = os.path.join(builddir, "tests", "vm")
    info, _ = images.guest_inputs(vm_dir)
    echo = os.path.join(builddir, "bench", "vport_echo")
    if not os.path.exists(echo):
        raise Skip(f"{echo} not built (meson compile -C {builddir})")
    # The guest runs daxprobe from its package, as every VM test does.
    try:
        deb = mkinitramfs.find_guest_deb(os.path.join(builddir, "deb"))
    except RuntimeError as e:
        raise Skip(str(e))
    cache = guest_kernel.default_cache()
    qga, qga_version = fetch_qemu_ga(cache, os.path.join(out, "qemu-ga-deb"))
    initrd = build_initramfs(info, deb, qga, echo, out)
    log(f"initramfs {initrd}; qemu-ga {qga_version}")
    g = Guest(info["vmlinux"], initrd, "agent-bench", extra_ports=[QGA_PORT], keep=args.keep)
    result = {"schema": "daxprobe.agent-bench/1", "kernel": info["version"],
              "qemu_ga": qga_version, "pings": args.pings, "checks": args.checks,
              "load_before": os.getloadavg(), "rounds": []}
    t0 = time.monotonic()
    with g:
        log(f"booting {info['version']} under TCG in {g.dir}")
        a = g.connect_agent(args.timeout)
        q = g.connect_port(QGA_PORT, args.timeout)
        al, ql = Lines(a), Lines(q)
        qga_sync(q, ql, args.timeout)
        log(f"qemu-ga answered guest-sync at {time.monotonic() - g.t_start:.1f} s")
        seq = [0]
        for r in range(args.rounds):
            rec = agent_round(g, a, al, q, ql, args, seq, r + 1)
            result["rounds"].append(rec)
            log(f"round {r + 1}: ping {stats.percentile(rec['agent_ping'], 50):.0f} µs, "
                f"echo {stats.percentile(rec['echo'], 50):.0f} µs, check "
                f"{stats.percentile(rec['agent_check'], 50) / 1000:.1f} ms, fsinfo "
                f"{stats.percentile(rec['qga_fsinfo'], 50) / 1000:.1f} ms")
        g.tell_guest("done")
        g.wait(args.timeout)
        files = {k: v.decode(errors="replace") for k, v in g.results().items()}
        a.close()
        q.close()
    result["wall_seconds"] = round(time.monotonic() - t0, 1)
    result["load_after"] = os.getloadavg()
    if files.get("error.txt"):
        raise GuestError(f"guest: {files['error.txt']}")
    for i, rec in enumerate(result["rounds"], 1):
        start_us = int(files.get(f"agent-start-{i}.txt", "0").strip() or 0)
        ts = rec["report"]["timestamp"] or {}
        built_us = ts.get("seconds", 0) * 1000000 + ts.get("microseconds", 0)
        rec["first_report_ms"] = (built_us - start_us) / 1000 if start_us and built_us else None
        rec["agent_memory"] = stats.memory(files, f"agent-{i}")
        rec["agent_log"] = files.get(f"agent-{i}.log", "")[-2000:]
        if start_us and built_us:
            rec["startup"] = stats.startup_split(rec["agent_log"], start_us, built_us)
    stats.cpu_per_ping(result["rounds"], files.get("cpu.txt", ""))
    result["qga_memory"] = stats.memory(files, "qemu-ga")
    result["summary"] = stats.summarise(result)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "result.json"), "w") as f:
        json.dump(result, f, indent=1)
    return result


def run_local(args, builddir, out):
    import agent_bench_local
    daxprobe = args.daxprobe or os.path.join(builddir, "agent", "daxprobe")
    echo = os.path.join(builddir, "bench", "vport_echo")
    for p in (daxprobe, echo):
        if not os.path.exists(p):
            raise Skip(f"{p} not built (meson compile -C {builddir})")
    qga = None
    if not args.no_qga:
        cache = guest_kernel.default_cache()
        qga = fetch_qemu_ga(cache, os.path.join(out, "qemu-ga-deb"))
    result = agent_bench_local.run_local(args, daxprobe, echo, qga, sys.modules[__name__])
    with open(os.path.join(out, "result.json"), "w") as f:
        json.dump(result, f, indent=1)
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("builddir", nargs="?", default=os.path.join(SOURCE_ROOT, "build"))
    ap.add_argument("--rounds", type=int, default=3, help="agent+echo phases (default 3)")
    ap.add_argument("--pings", type=int, default=300, help="pings per phase (default 300)")
    ap.add_argument("--checks", type=int, default=30, help="checks per round (default 30)")
    ap.add_argument("--warmup", type=int, default=10, help="pings not counted per phase")
    ap.add_argument("--timeout", type=float, default=300.0, help="bound on waits, s")
    ap.add_argument("--daxprobe", help="--local's daxprobe (default BUILDDIR/agent/daxprobe; "
                    "the guest's comes from BUILDDIR/deb: meson compile -C BUILDDIR debs)")
    ap.add_argument("--out", help="output folder (default BUILDDIR/agent-bench)")
    ap.add_argument("--keep", action="store_true", help="keep the guest's run folder")
    ap.add_argument("--from", dest="from_json", help="re-print a stored result.json")
    ap.add_argument("--local", action="store_true",
                    help="no VM: the agent and the echo on unix sockets on this machine")
    ap.add_argument("--no-qga", action="store_true", help="--local without qemu-ga")
    ap.add_argument("--result", help="the result's name (default: agent-guest, agent-local)")
    ap.add_argument("--results-dir", help="where NAME.json goes (default: bench/results)")
    args = ap.parse_args()
    if args.from_json:
        log(stats.table(stats.load(args.from_json)))
        return 0
    if args.rounds < 1 or args.pings < 1 or args.checks < 1:
        ap.error("--rounds, --pings and --checks must be >= 1")
    builddir = os.path.abspath(args.builddir)
    out = os.path.abspath(args.out or os.path.join(
        builddir, "agent-bench-local" if args.local else "agent-bench"))
    os.makedirs(out, exist_ok=True)
    try:
        result = run_local(args, builddir, out) if args.local else run(args, builddir, out)
    except Skip as e:
        log(f"SKIP: {e}")
        return 77
    except (GuestError, RuntimeError, OSError, ValueError, KeyError,
            subprocess.CalledProcessError) as e:
        log(f"FAIL: {type(e).__name__}: {e}")
        return 1
    log(stats.table(result))
    # The suite's smoke asserts only this: every series has numbers.
    want = ["agent_ping", "echo", "agent_check"] + ([] if args.local and args.no_qga
                                                     else ["qga_ping", "qga_fsinfo"])
    empty = [k for k in want if not result["summary"]["series_us"][k].get("n")]
    if empty or result["summary"]["first_report_ms"].get("n", 0) == 0:
        log(f"FAIL: no numbers for {', '.join(empty) or 'first report'}")
        return 1
    note = ("native times" if args.local
            else "TCG: absolute times are inflated, read ratios")
    conditions = (f"{result['wall_seconds']} s, load {result['load_before'][0]:.1f}"
                  f" -> {result['load_after'][0]:.1f}; {note}")
    log(f"\n{out}/result.json ({conditions})")
    result_file.write(args.result or ("agent-local" if args.local else "agent-guest"),
                      stats.headline(result["summary"]), conditions=conditions,
                      results_dir=args.results_dir)
    return 0


if __name__ == "__main__":
    import signal
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sys.exit(main())
