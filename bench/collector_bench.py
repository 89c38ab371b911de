#!/usr/bin/env python3
"""The collector's benchmarks, as ratios within one run (bench/README.md).

  bench/collector_bench.py ingest --build build [--runs 5] [--guests 1,100,1000]
  bench/collector_bench.py query  --build build [--runs 5] [--rows 10000,100000,1000000]

ingest: for each guest count, RUNS interleaved rounds of (a) the real
daxprobe-collector run --watch-dir on fleet_load's simulated guests (real
protocol, unix sockets, libvirt layout), reporting reports/s, ack latency
p50/p99, the collector's CPU per report and peak RSS; (b) sqlite_floor, the
same rows inserted into SQLite by a minimal program with the collector's
durability (synchronous=FULL: an ack survives a host crash), and once more
with synchronous=NORMAL to show what that durability costs SQLite itself.
Prints median and spread (min-max) of each figure and the ratio
collector/floor.

query: fills a store with query_fill (1,000 VMs), then times
`daxprobe-collector query` (latest per VM) and `query --vm g0000 --json`
against the same program failing at once on a missing state dir (process
start, CLI parse, SQLite open): the difference is the query's own cost.
"""
import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import result_file

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPORT = os.path.join(TOP, "tests", "fixtures", "fsdax-ext4", "expected.json")
DEFAULT_MAX_ROWS = 1000000  # never trims in these runs: the peer of a trimming run


def spread(xs, fmt="{:.1f}"):
    return f"{fmt.format(statistics.median(xs))} ({fmt.format(min(xs))}-{fmt.format(max(xs))})"


def proc_cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_hwm_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def ingest_once(build, guests, per_guest, window, max_rows, rate=0):
    work = tempfile.mkdtemp(prefix="dxbench-")
    try:
        watch, state = os.path.join(work, "channels"), os.path.join(work, "state")
        os.mkdir(watch)
        os.mkdir(state)
        load = subprocess.Popen(
            [os.path.join(build, "bench", "fleet_load"), "--dir", watch, "--report", REPORT,
             "--guests", str(guests), "--reports", str(per_guest), "--window", str(window)]
            + (["--rate", str(rate)] if rate else []),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first = load.stderr.readline()  # "... listening ...": the sockets exist
        if not first.endswith("\n") or " listening " not in first:
            load.kill()
            raise RuntimeError(f"fleet_load did not start listening: {first!r}")
        coll = subprocess.Popen(
            [os.path.join(build, "collector", "daxprobe-collector"), "run", "--watch-dir", watch,
             "--state-dir", state, "--metrics-listen", "", "--max-guests", str(guests + 10),
             "--guest-rate", "1000000", "--guest-byte-rate", "10000000000",
             "--max-rows", str(max_rows), "--log-level", "warn"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            out, err = load.communicate(timeout=600)
            cpu = proc_cpu_s(coll.pid)
            hwm = proc_hwm_kib(coll.pid)
        finally:
            coll.send_signal(signal.SIGTERM)
            _, cerr = coll.communicate(timeout=60)
        if load.returncode != 0:
            raise RuntimeError(f"fleet_load failed: {err}\ncollector: {cerr}")
        r = json.loads(out)
        r["cpu_us_per_report"] = cpu * 1e6 / r["reports"]
        r["rss_mib"] = hwm / 1024
        return r
    finally:
        shutil.rmtree(work, ignore_errors=True)


def floor_once(build, rows, batch, vms, sync="FULL"):
    work = tempfile.mkdtemp(prefix="dxfloor-")
    try:
        p = subprocess.Popen(
            [os.path.join(build, "bench", "sqlite_floor"), "--db", os.path.join(work, "f.db"),
             "--report", REPORT, "--rows", str(rows), "--batch", str(batch), "--vms", str(vms),
             "--synchronous", sync],
            stdout=subprocess.PIPE, text=True)
        out = p.stdout.read()
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode != 0:
            raise RuntimeError(f"sqlite_floor failed: {p.returncode}")
        r = json.loads(out)
        # CPU, not wall: on a shared machine the floor's CPU per row is the
        # fair peer of the collector's CPU per report.
        r["cpu_us_per_row"] = (ru.ru_utime + ru.ru_stime) * 1e6 / rows
        return r
    finally:
        shutil.rmtree(work, ignore_errors=True)


def ingest(args):
    print(f"report: {REPORT}; {args.total} reports per run; --max-rows {args.max_rows}; window "
          f"{args.window or '1000/guests (at most 64)'} unacked per guest; "
          + (f"paced at {args.rate} reports/s per guest" if args.rate else "unpaced (saturating)")
          + "; collector and floor at synchronous=FULL")
    print("| guests | collector reports/s | floor rows/s | collector/floor | ack p50 ms | "
          "ack p99 ms | collector CPU µs/report | floor CPU µs/row | CPU collector/floor "
          "| reports/s per core of CPU | collector peak RSS MiB "
          "| floor NORMAL/FULL rows/s (the cost of FULL) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    figures = []
    for guests in args.guests:
        per = max(1, args.total // guests)
        window = args.window or (64 if args.rate else max(1, min(64, 1000 // guests)))
        runs = []
        for i in range(args.runs):  # interleaved: both see the same noise
            c = ingest_once(args.build, guests, per, window, args.max_rows, args.rate)
            f = floor_once(args.build, per * guests, args.floor_batch, guests)
            normal = floor_once(args.build, per * guests, args.floor_batch, guests, "NORMAL")
            c["full_cost"] = normal["rows_per_s"] / f["rows_per_s"]
            c["ratio"] = c["reports_per_s"] / f["rows_per_s"]
            c["floor"] = f["rows_per_s"]
            c["floor_cpu"] = f["cpu_us_per_row"]
            c["cpu_ratio"] = c["cpu_us_per_report"] / f["cpu_us_per_row"]
            c["per_core"] = 1e6 / c["cpu_us_per_report"]
            runs.append(c)
            print(f"  run {i + 1}: {json.dumps(c)}", file=sys.stderr)
        col = lambda k: [r[k] for r in runs]
        print(f"| {guests} | {spread(col('reports_per_s'), '{:.0f}')} | {spread(col('floor'), '{:.0f}')} "
              f"| {spread(col('ratio'), '{:.3f}')} | {spread(col('ack_p50_ms'), '{:.2f}')} "
              f"| {spread(col('ack_p99_ms'), '{:.2f}')} | {spread(col('cpu_us_per_report'))} "
              f"| {spread(col('floor_cpu'))} | {spread(col('cpu_ratio'), '{:.2f}')} "
              f"| {spread(col('per_core'), '{:.0f}')} | {spread(col('rss_mib'))} "
              f"| {spread(col('full_cost'), '{:.2f}')} |")
        sys.stdout.flush()
        med = lambda k: round(statistics.median(col(k)), 2)
        figures.append(result_file.figure(
            f"collector CPU per report, guests={guests}", "µs CPU", med("cpu_us_per_report"),
            "sqlite_floor at synchronous=FULL, CPU per row, the same rows", med("floor_cpu"),
            med("cpu_ratio"), "value / floor, median of the per-run ratios", "<= 1.5"))
        if args.rate:
            figures.append(result_file.figure(
                f"ack p99, guests={guests} x {args.rate}/s", "ms", med("ack_p99_ms"),
                None, None, None, None))
    name = "collector-" + ("acks" if args.rate else "ingest") + (
        f"-max-rows-{args.max_rows}" if args.max_rows != DEFAULT_MAX_ROWS else "")
    result_file.write(args.result or name, figures, results_dir=args.results_dir,
                      conditions=f"{args.total} reports per run, {args.runs} runs, load "
                      f"{os.getloadavg()[0]:.1f}")


# What Store::eachLatest selects (collector/store_read.cpp), for the floor.
LATEST_SQL = ("SELECT vm, socket, machine_id, hostname, agent_version, stream, seq, verdict, "
              "dropped_reports, last_report_at, last_seen_at, host_facts, report_rows "
              "FROM vms ORDER BY vm")

CPU = {}  # argv tuple -> CPU ms (user + system) of each invocation


def time_cmd(argv, n):
    """Wall ms of each of n invocations; their CPU ms go to CPU[argv]."""
    out, cpu = [], CPU.setdefault(tuple(argv), [])
    for _ in range(n):
        t = time.perf_counter()
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, _, ru = os.wait4(p.pid, 0)
        out.append((time.perf_counter() - t) * 1000)
        cpu.append((ru.ru_utime + ru.ru_stime) * 1000)
    return out


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


def query(args):
    exe = os.path.join(args.build, "collector", "daxprobe-collector")
    print(f"{args.samples} invocations per figure and run; report: {REPORT}; 1,000 VMs")
    print("| rows | start only p50 ms | latest p50 ms | latest p99 ms | latest p99 - start p50 ms "
          "| latest --json p50 ms | latest --json p99 ms | latest --json p99 - start p50 ms "
          "| --vm --json p50 ms | --vm --json p99 ms | --vm --json p99 - start p50 ms |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    cpu_rows, figures = [], []
    for rows in args.rows:
        work = tempfile.mkdtemp(prefix="dxquery-")
        try:
            subprocess.run([os.path.join(args.build, "bench", "query_fill"), "--db",
                            os.path.join(work, "collector.db"), "--report", REPORT,
                            "--rows", str(rows), "--vms", "1000"], check=True, stdout=subprocess.DEVNULL)
            figs = {k: [] for k in ("start", "l50", "l99", "ld", "j50", "j99", "jd", "h50", "h99",
                                    "hd")}
            for i in range(args.runs):
                start = time_cmd([exe, "query", "--state-dir", os.path.join(work, "none")], args.samples)
                latest = time_cmd([exe, "query", "--state-dir", work], args.samples)
                latestj = time_cmd([exe, "query", "--state-dir", work, "--json"], args.samples)
                hist = time_cmd([exe, "query", "--state-dir", work, "--vm", "g0000", "--json"],
                                args.samples)
                # The floor: SQLite's own shell stepping the same rows
                # (beyond its own start, SELECT 1 on the same file).
                db = os.path.join(work, "collector.db")
                time_cmd(["sqlite3", "-readonly", db, "SELECT 1"], args.samples)
                time_cmd(["sqlite3", "-readonly", db, LATEST_SQL], args.samples)
                time_cmd(["sqlite3", "-readonly", "-json", db, LATEST_SQL], args.samples)
                if i == args.runs - 1:  # CPU of every invocation of every run: p50 and p99
                    c = lambda *a: CPU.pop(tuple([exe, "query"] + list(a)))
                    cs, cl, cj, ch = (c("--state-dir", os.path.join(work, "none")),
                                      c("--state-dir", work), c("--state-dir", work, "--json"),
                                      c("--state-dir", work, "--vm", "g0000", "--json"))
                    q = lambda sql: CPU.pop(("sqlite3", "-readonly", db, sql))
                    fs, fl = q("SELECT 1"), q(LATEST_SQL)
                    fj = CPU.pop(("sqlite3", "-readonly", "-json", db, LATEST_SQL))
                    cpu_rows.append(
                        f"| {rows} | {pct(cs, .5):.2f} / {pct(cs, .99):.2f} | {pct(cl, .5):.2f} / "
                        f"{pct(cl, .99):.2f} (+{pct(cl, .99) - pct(cs, .5):.2f}) | {pct(cj, .5):.2f} / "
                        f"{pct(cj, .99):.2f} (+{pct(cj, .99) - pct(cs, .5):.2f}) | {pct(ch, .5):.2f} / "
                        f"{pct(ch, .99):.2f} (+{pct(ch, .99) - pct(cs, .5):.2f}) | "
                        f"{pct(fs, .5):.2f} / {pct(fl, .5):.2f} / {pct(fl, .99):.2f} "
                        f"(+{pct(fl, .99) - pct(fs, .5):.2f}) | {pct(fj, .5):.2f} / "
                        f"{pct(fj, .99):.2f} (+{pct(fj, .99) - pct(fs, .5):.2f}) |")
                    beyond = lambda xs, start: round(pct(xs, .99) - pct(start, .5), 2)
                    for what, xs, floor_name, floor in (
                            ("latest", cl, "sqlite3, the same SELECT", beyond(fl, fs)),
                            ("latest --json", cj, "sqlite3 -json, the same SELECT", beyond(fj, fs)),
                            ("--vm g0000 --json", ch, None, None)):
                        figures.append(result_file.figure(
                            f"query {what}, {rows} rows: CPU p99 beyond start", "ms CPU",
                            beyond(xs, cs), floor_name, floor,
                            result_file.ratio(beyond(xs, cs), floor) if floor_name else None,
                            "value / floor" if floor_name else None, "<= 5 ms"))
                s50 = pct(start, 0.5)
                for k, v in (("start", s50), ("l50", pct(latest, 0.5)), ("l99", pct(latest, 0.99)),
                             ("ld", pct(latest, 0.99) - s50), ("j50", pct(latestj, 0.5)),
                             ("j99", pct(latestj, 0.99)), ("jd", pct(latestj, 0.99) - s50),
                             ("h50", pct(hist, 0.5)),
                             ("h99", pct(hist, 0.99)), ("hd", pct(hist, 0.99) - s50)):
                    figs[k].append(v)
            f = lambda k: spread(figs[k], "{:.2f}")
            print(f"| {rows} | {f('start')} | {f('l50')} | {f('l99')} | {f('ld')} | {f('j50')} "
                  f"| {f('j99')} | {f('jd')} | {f('h50')} | {f('h99')} | {f('hd')} |")
            sys.stdout.flush()
        finally:
            shutil.rmtree(work, ignore_errors=True)
    print(f"\nCPU ms (user + system, wait4) per invocation, p50 / p99 over {args.runs} x "
          f"{args.samples}; (+ p99 beyond the start-only p50)")
    print("| rows | start only | latest | latest --json | --vm g0000 --json "
          "| floor: sqlite3 SELECT 1 p50 / the latest SELECT p50 / p99 (+) "
          "| floor for --json: sqlite3 -json, the same SELECT p50 / p99 (+) |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(cpu_rows))
    result_file.write(args.result or "collector-query", figures, results_dir=args.results_dir,
                      conditions=f"{args.runs} runs x {args.samples} invocations, 1,000 VMs, "
                      f"load {os.getloadavg()[0]:.1f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["ingest", "query"])
    ap.add_argument("--build", default=os.path.join(TOP, "build"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--guests", default="1,100,1000")
    ap.add_argument("--total", type=int, default=50000, help="reports per ingest run")
    ap.add_argument("--window", type=int, default=0,
                    help="unacked reports per guest (0: 1000/guests, at most 64)")
    ap.add_argument("--floor-batch", type=int, default=1000)
    ap.add_argument("--rate", type=float, default=0,
                    help="pace each guest at this many reports/s (0: as fast as acks allow)")
    ap.add_argument("--max-rows", type=int, default=DEFAULT_MAX_ROWS,
                    help="the collector's --max-rows (10000, the default, trims once a VM is full)")
    ap.add_argument("--rows", default="10000,100000,1000000")
    ap.add_argument("--samples", type=int, default=100)
    ap.add_argument("--result", help="the result's name (default: collector-ingest, "
                    "-acks with --rate, -query; -max-rows-N with another --max-rows)")
    ap.add_argument("--results-dir", help="where NAME.json goes (default: bench/results)")
    args = ap.parse_args()
    args.build = os.path.abspath(args.build)
    args.guests = [int(x) for x in args.guests.split(",")]
    args.rows = [int(x) for x in args.rows.split(",")]
    (ingest if args.what == "ingest" else query)(args)


if __name__ == "__main__":
    main()
