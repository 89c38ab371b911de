#!/usr/bin/env python3
"""The cost of `daxprobe check` against its peer toolchain, and of its
per-file residency against fincore and vmtouch (issue 10). A benchmark, not a
test: it prints figures and asserts nothing.

  bench/check_bench.py native    [--runs 15]            # this host
  PYTHONPATH=tests/vm bench/check_bench.py guest     [--runs 15]            # the test guest (TCG)
  bench/check_bench.py residency [--runs 9] [--sizes 1G,16G] [--dir DIR]

What is compared, per round (the commands interleaved, so a noisy neighbour
hits all of them alike):
  check: `daxprobe check --json --no-active --path FILE`
  peers: `ndctl list -BRN`, `daxctl list`, `findmnt -J`, `fincore FILE`,
         `cat /proc/meminfo /proc/vmstat` (the same facts, by the usual tools)
Each command runs under bench/run_rusage (fork, exec, wait4): CPU time (user
+ system), page faults (minor + major) and peak RSS, as the kernel charged
the child. Syscalls: one `strace -f -c` run per command. Reported: median
and min-max over the rounds of each figure and of the ratio peers/check.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

import result_file

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(HERE)


def peers(file):
    return {
        "ndctl": ["ndctl", "list", "-BRN"],
        "daxctl": ["daxctl", "list"],
        "findmnt": ["findmnt", "-J"],
        "fincore": ["fincore", file],
        "cat": ["cat", "/proc/meminfo", "/proc/vmstat"],
    }


def run_once(rusage, tag, argv):
    p = subprocess.run([rusage, "-t", tag, "-n", "1", "--"] + argv,
                       capture_output=True, text=True, check=True)
    return json.loads(p.stdout.splitlines()[-1])


def syscalls(argv):
    """Total syscalls of one run (strace -f -c), or None without strace."""
    if not shutil.which("strace"):
        return None
    with tempfile.NamedTemporaryFile("r", suffix=".strace") as f:
        subprocess.run(["strace", "-f", "-c", "-o", f.name] + argv,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return parse_strace_total(f.read())


def parse_strace_total(text):
    for line in text.splitlines():
        fields = line.split()
        if fields and fields[-1] == "total":
            return int(fields[3])  # % time, seconds, usecs/call, calls, [errors,] total
    return None


def spread(values):
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    med = statistics.median(values)
    fmt = "{:.0f}" if med >= 100 else "{:.2f}"
    return f"{fmt.format(med)} ({fmt.format(min(values))}-{fmt.format(max(values))})"


def faults(r):
    return r["minflt"] + r["majflt"]


PEERS = "the peers together (ndctl -BRN, daxctl, findmnt, fincore, cat meminfo vmstat)"
PER_ROUND = "floor / value, median of the per-round ratios"


def summarize(rounds, counts, names, what="check"):
    """rounds: [{tag: rusage}]; counts: {tag: syscalls}. One row per figure,
    and the headline figures (result_file) of `what`."""
    peer_names = [n for n in names if n != "check"]
    rows, figures = [], []
    for label, unit, key in (("CPU ms (user+sys)", "ms CPU", lambda r: r["cpu_us"] / 1000),
                             ("page faults", "page faults", faults)):
        check = [key(r["check"]) for r in rounds]
        peer = [sum(key(r[n]) for n in peer_names) for r in rounds]
        ratios = [p / c for p, c in zip(peer, check) if c > 0]
        rows.append((label, spread(check), spread(peer), spread(ratios)))
        figures.append(result_file.figure(
            f"{what}, {label}", unit, round(statistics.median(check), 2), PEERS,
            round(statistics.median(peer), 2), round(statistics.median(ratios), 2), PER_ROUND,
            ">= 20" if unit == "ms CPU" else None))
    if counts.get("check") and all(counts.get(n) for n in peer_names):
        total = sum(counts[n] for n in peer_names)
        rows.append(("syscalls (one strace -f -c run)", str(counts["check"]), str(total),
                     f"{total / counts['check']:.2f}"))
        figures.append(result_file.figure(f"{what}, syscalls", "syscalls", counts["check"], PEERS,
                                          total, round(total / counts["check"], 2),
                                          "floor / value"))
    rows.append(("peak RSS MiB", spread([r["check"]["maxrss_kib"] / 1024 for r in rounds]),
                 "max " + spread([max(r[n]["maxrss_kib"] for n in peer_names) / 1024 for r in rounds]),
                 ""))
    per_peer = {n: spread([r[n]["cpu_us"] / 1000 for r in rounds]) for n in peer_names}
    return rows, per_peer, figures


def print_table(title, rows, per_peer, n):
    print(f"\n{title} (median (min-max) of {n} rounds)")
    print("| figure | check | peers together | peers / check |")
    print("|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print("per peer, CPU ms: " + ", ".join(f"{k} {v}" for k, v in per_peer.items()))


def measure(rusage, commands, runs):
    names = list(commands)
    rounds = []
    for i in range(runs):
        order = names[i % len(names):] + names[:i % len(names)]
        rounds.append({n: run_once(rusage, n, commands[n]) for n in order})
    counts = {n: syscalls(argv) for n, argv in commands.items()}
    return rounds, counts, names


def find_build_file(build, rel):
    p = os.path.join(build, rel)
    if not os.path.exists(p):
        sys.exit(f"{p} not found: meson compile -C {build}")
    return p


def cmd_native(args):
    rusage = find_build_file(args.build, "bench/run_rusage")
    daxprobe = args.daxprobe or find_build_file(args.build, "agent/daxprobe")
    with tempfile.TemporaryDirectory(prefix="checkbench-") as d:
        file = os.path.join(d, "file")
        with open(file, "wb") as f:
            f.write(os.urandom(1 << 20) * 32)  # 32 MiB, in the page cache
        commands = {"check": [daxprobe, "check", "--json", "--no-active", "--path", file]}
        commands.update(peers(file))
        rounds, counts, names = measure(rusage, commands, args.runs)
    rows, per_peer, figures = summarize(rounds, counts, names)
    print_table(f"check vs peers, this host ({os.uname().release})", rows, per_peer, args.runs)
    print("syscalls per command: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    result_file.write(args.result or "check-native", figures, conditions=conditions(),
                      results_dir=args.results_dir)


def conditions():
    return f"host kernel {os.uname().release}, load {os.getloadavg()[0]:.1f}"


def size_bytes(s):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(s[:-1]) * units[s[-1].upper()] if s[-1].upper() in units else int(s)


def residency_of(out_check, out_fincore, out_vmtouch):
    doc = json.loads(out_check)
    res = (doc.get("files") or [{}])[0].get("residency") or {}
    fin = json.loads(out_fincore)["fincore"][0]
    vm = [l for l in out_vmtouch.splitlines() if "Resident Pages" in l]
    return res.get("resident_bytes"), res.get("method"), int(fin["res"]), vm[0].split()[2] if vm else "?"


def cmd_residency(args):
    rusage = find_build_file(args.build, "bench/run_rusage")
    daxprobe = find_build_file(args.build, "agent/daxprobe")
    for tool in ("fincore", "vmtouch"):
        if not shutil.which(tool):
            sys.exit(f"{tool} not found (packaging/install-deps.sh installs it)")
    os.makedirs(args.dir, exist_ok=True)
    figures = []
    for size in args.sizes.split(","):
        n = size_bytes(size)
        file = os.path.join(args.dir, f"residency-{size}")
        with open(file, "wb") as f:
            os.posix_fallocate(f.fileno(), 0, n)
        # Half of it (at most 1 GiB) in the page cache: something to count.
        cached = min(n // 2, 1 << 30)
        with open(file, "rb") as f:
            left = cached
            while left > 0:
                left -= len(f.read(min(left, 8 << 20)))
        commands = {
            "check": [daxprobe, "check", "--json", "--no-active", "--path", file],
            "fincore": ["fincore", file],
            "vmtouch": ["vmtouch", file],
        }
        rounds, counts, names = measure(rusage, commands, args.runs)
        outs = [subprocess.run(c, capture_output=True, text=True).stdout for c in
                (commands["check"], ["fincore", "--json", "--bytes", file], ["vmtouch", file])]
        got, method, fin, vm = residency_of(*outs)
        print(f"\nresidency of a {size} file, {cached >> 20} MiB of it read (median (min-max) of {args.runs} rounds); "
              f"resident bytes: daxprobe {got} ({method}), fincore {fin}, vmtouch pages {vm}")
        print("| figure | check --path | fincore | vmtouch | fincore / check | vmtouch / check |")
        print("|---|---|---|---|---|---|")
        for label, key in (("CPU ms", lambda r: r["cpu_us"] / 1000), ("page faults", faults),
                           ("peak RSS MiB", lambda r: r["maxrss_kib"] / 1024)):
            vals = {k: [key(r[k]) for r in rounds] for k in names}
            ratio = {k: [b / a for a, b in zip(vals["check"], vals[k]) if a > 0] for k in ("fincore", "vmtouch")}
            print(f"| {label} | {spread(vals['check'])} | {spread(vals['fincore'])} | "
                  f"{spread(vals['vmtouch'])} | {spread(ratio['fincore'])} | {spread(ratio['vmtouch'])} |")
        print(f"| syscalls | {counts['check']} | {counts['fincore']} | {counts['vmtouch']} | | |")
        cpu = {k: [r[k]["cpu_us"] / 1000 for r in rounds] for k in names}
        for peer in ("fincore", "vmtouch"):
            figures.append(result_file.figure(
                f"check --path, a {size} file ({cached >> 20} MiB cached), CPU", "ms CPU",
                round(statistics.median(cpu["check"]), 2), f"{peer} on the same file",
                round(statistics.median(cpu[peer]), 2),
                round(statistics.median([b / a for a, b in zip(cpu["check"], cpu[peer]) if a > 0]), 2),
                PER_ROUND))
        if not args.keep:
            os.unlink(file)
    result_file.write(args.result or "check-residency", figures, conditions=conditions(),
                      results_dir=args.results_dir)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(SOURCE, "build"))
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--result", help="the result's name (default: check-MODE)")
    common.add_argument("--results-dir", help="where NAME.json goes (default: bench/results)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    n = sub.add_parser("native", parents=[common])
    n.add_argument("--runs", type=int, default=15)
    n.add_argument("--daxprobe", help="another daxprobe binary (e.g. an older build) to compare")
    g = sub.add_parser("guest", parents=[common])
    g.add_argument("--runs", type=int, default=15)
    g.add_argument("--kernel", default="6.1", choices=["6.1", "6.12"])
    r = sub.add_parser("residency", parents=[common])
    r.add_argument("--runs", type=int, default=9)
    r.add_argument("--sizes", default="1G,16G")
    r.add_argument("--dir", default=os.path.join(SOURCE, "build", "bench-residency"))
    r.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    if args.cmd == "native":
        cmd_native(args)
    elif args.cmd == "residency":
        cmd_residency(args)
    else:
        import check_bench_guest  # here: only the guest side needs the VM harness (PYTHONPATH)
        check_bench_guest.run(args, summarize, print_table)


if __name__ == "__main__":
    sys.exit(main())
