"""bench/agent_bench.py --local: the same measurements on this machine, no VM.

`daxprobe agent --listen SOCKET` instead of a virtio port, `vport_echo
listen-echo SOCKET` as the echo, and (unless --no-qga) Debian 12's qemu-ga
from the same .deb on a unix socket (`-m unix-listen`). Native times: this is
where the absolute goals (first report <= 50 ms, RSS <= 2 MiB) can be read,
with this machine's mounts and no NVDIMM (the check then reports no_nfit).
"""

import os
import shutil
import subprocess
import tempfile
import time

import agent_bench_stats as stats
from harness.guest import GuestError, connect_when_listening


def connect(path, proc, timeout=30.0):
    """Connect once the program has bound its socket (bounded retries)."""
    return connect_when_listening(path, proc, path, timeout)


def proc_memory(pid):
    files = {}
    for what in ("status", "smaps_rollup", "smaps"):
        with open(f"/proc/{pid}/{what}") as f:
            files[f"p.{what}"] = f.read()
    return stats.memory(files, "p")


def stop(p):
    if p.poll() is None:
        p.terminate()
    p.wait(timeout=30)


def run_local(args, daxprobe, echo, qga, bench):
    """bench: the agent_bench module (Lines, rtt, is_return, qga_sync)."""
    tmp = tempfile.mkdtemp(prefix="dxab-")
    result = {"schema": "daxprobe.agent-bench/1", "mode": "local", "kernel": os.uname().release,
              "qemu_ga": qga[1] if qga else None, "pings": args.pings, "checks": args.checks,
              "load_before": os.getloadavg(), "rounds": []}
    qp = q = None
    t0 = time.monotonic()
    try:
        if qga:
            qsock = os.path.join(tmp, "qga.sock")
            qp = subprocess.Popen([qga[0], "-m", "unix-listen", "-p", qsock, "-f",
                                   os.path.join(tmp, "qga.pid"), "-t", tmp],
                                  stderr=subprocess.DEVNULL)
            q = connect(qsock, qp)
            ql = bench.Lines(q)
            bench.qga_sync(q, ql, args.timeout)
        seq = [0]
        for r in range(args.rounds):
            rec = {k: [] for k in ("agent_ping", "qga_ping", "agent_check", "qga_fsinfo", "echo")}
            sock, start = os.path.join(tmp, "agent.sock"), os.path.join(tmp, "start.txt")
            logf = open(os.path.join(tmp, "agent.log"), "w+")
            # TZ=UTC: the log's local-time stamps read back as UTC (startup_split).
            p = subprocess.Popen([echo, "exec-timed", start, daxprobe, "agent", "--listen", sock,
                                  "--interval", "3600", "--recheck", "0"],
                                 stderr=logf, env=dict(os.environ, TZ="UTC"))
            try:
                a = connect(sock, p)
                al = bench.Lines(a)
                rep = al.message(time.monotonic() + args.timeout,
                                 lambda m: m.get("event") == "report")
                ts = rep.get("timestamp") or {}
                built = ts.get("seconds", 0) * 1000000 + ts.get("microseconds", 0)
                with open(start) as f:
                    start_us = int(f.read())
                rec["first_report_ms"] = (built - start_us) / 1000
                for i in range(args.warmup + args.pings):
                    seq[0] += 1
                    t, msg = bench.rtt(a, al, b'{"execute":"ping","id":%d}\n' % seq[0],
                                       bench.is_return(seq[0]))
                    if msg.get("return") != {}:
                        raise GuestError(f"agent ping: {msg}")
                    if i >= args.warmup:
                        rec["agent_ping"].append(t)
                for i in range(args.warmup + args.pings if q else 0):
                    tq, _ = bench.rtt(q, ql, b'{"execute":"guest-ping"}\n',
                                      lambda m: "return" in m)
                    if i >= args.warmup:
                        rec["qga_ping"].append(tq)
                for i in range(args.checks + 1):
                    seq[0] += 1
                    t, _ = bench.rtt(a, al, b'{"execute":"check","id":%d}\n' % seq[0],
                                     bench.is_return(seq[0]))
                    if i:
                        rec["agent_check"].append(t)
                    if q:
                        tq, _ = bench.rtt(q, ql, b'{"execute":"guest-get-fsinfo"}\n',
                                          lambda m: "return" in m)
                        if i:
                            rec["qga_fsinfo"].append(tq)
                rec["agent_memory"] = proc_memory(p.pid)
                a.close()
            finally:
                stop(p)
                logf.seek(0)
                rec["agent_log"] = logf.read()[-2000:]
                logf.close()
            if rec.get("first_report_ms") is not None:
                rec["startup"] = stats.startup_split(rec["agent_log"], start_us, built)
            esock = os.path.join(tmp, "echo.sock")
            e = subprocess.Popen([echo, "listen-echo", esock])
            try:
                c = connect(esock, e)
                cl = bench.Lines(c)
                for i in range(args.warmup + args.pings):
                    seq[0] += 1
                    line = b'{"execute":"ping","id":%d}\n' % seq[0]
                    t, _ = bench.rtt(c, cl, line, lambda m, i=seq[0]: m.get("id") == i)
                    if i >= args.warmup:
                        rec["echo"].append(t)
                c.close()
            finally:
                stop(e)
            result["rounds"].append(rec)
        if qp:
            result["qga_memory"] = proc_memory(qp.pid)
    finally:
        if q:
            q.close()
        if qp:
            stop(qp)
        shutil.rmtree(tmp, ignore_errors=True)
    result["wall_seconds"] = round(time.monotonic() - t0, 1)
    result["load_after"] = os.getloadavg()
    result["summary"] = stats.summarise(result)
    return result
