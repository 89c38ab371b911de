#!/usr/bin/env python3
"""The DAX census's cost on a mount with many small files (issue 34: "at
most N files or T ms, sampled when larger"), against `find MOUNT -type f |
wc -l` in the same rounds: the cheapest way to merely count the files.

  bench/census_bench.py BUILDDIR [--files 100000] [--rounds 7] [--before EXE]

The mount: a tmpfs made for the run (root: it mounts one), FILES files of
100 bytes in directories of 1000. The census: BUILDDIR/bench/census_walk, one
takeDaxCensus with the check's default bounds, timed inside (wall) and by
run_rusage (CPU). --before EXE: census_walk built against an earlier census
(copy bench/census_walk.cpp into a checkout of that commit and compile it
with its probes/readers; census_walk.cpp says why it builds there), measured
in the same rounds. The rounds interleave the commands, so a noisy neighbour
hits all alike; figures are medians, ratios census / find.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import result_file


def make_tree(mnt, files):
    for d in range(0, files, 1000):
        sub = os.path.join(mnt, f"d{d // 1000:04d}")
        os.mkdir(sub)
        for i in range(min(1000, files - d)):
            with open(os.path.join(sub, f"f{i:04d}"), "wb") as f:
                f.write(b"x" * 100)


def measure(rusage, argv):
    """(cpu_us, stdout) of one run of argv under run_rusage."""
    with tempfile.NamedTemporaryFile("r") as out:
        p = subprocess.run([rusage, "-n", "1", "-o", out.name, "--"] + argv,
                           capture_output=True, text=True, check=True)
        ru = json.loads(p.stdout.splitlines()[-1])
        if ru["rc"] != 0:
            sys.exit(f"census_bench: {argv} exited {ru['rc']}")
        return ru["cpu_us"], out.read()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build")
    ap.add_argument("--files", type=int, default=100000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--before", help="census_walk built against an earlier census")
    ap.add_argument("--result", default="census-100k")
    ap.add_argument("--results-dir")
    a = ap.parse_args()
    rusage = os.path.join(a.build, "bench", "run_rusage")
    censuses = {"census": os.path.join(a.build, "bench", "census_walk")}
    if a.before:
        censuses["census before"] = a.before
    mnt = tempfile.mkdtemp(prefix="daxprobe-census-")
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2G,nr_inodes=0", "tmpfs", mnt], check=True)
    try:
        make_tree(mnt, a.files)
        cpu = {k: [] for k in [*censuses, "find"]}
        wall = {k: [] for k in censuses}
        last = {}
        for _ in range(a.rounds):
            for name, exe in censuses.items():
                us, out = measure(rusage, [exe, mnt])
                cpu[name].append(us)
                last[name] = json.loads(out)
                wall[name].append(last[name]["wall_us"])
            us, out = measure(rusage, ["sh", "-c", f"find {mnt} -type f | wc -l"])
            cpu["find"].append(us)
            if int(out) != a.files:
                sys.exit(f"census_bench: find counted {out.strip()} files, not {a.files}")
    finally:
        subprocess.run(["umount", mnt], check=True)
        os.rmdir(mnt)
    med = {k: statistics.median(v) / 1000 for k, v in cpu.items()}
    figures = []
    for name in censuses:
        print(f"{name}: {json.dumps(last[name])}")
        print(f"{name}: CPU {med[name]:.1f} ms, wall {statistics.median(wall[name]) / 1000:.1f} ms; "
              f"find | wc -l CPU {med['find']:.1f} ms")
        figures.append(result_file.figure(
            f"{name}: CPU of one census of {a.files} files on tmpfs ({last[name]['files']} examined"
            f"{', ' + last[name]['sampled'] if last[name].get('sampled') else ''}"
            f"{', stopped early: ' + last[name]['stopped_early'] if last[name]['stopped_early'] else ''})",
            "ms", round(med[name], 2), "find MOUNT -type f | wc -l", round(med["find"], 2),
            result_file.ratio(med[name], med["find"]), "value / floor"))
        figures.append(result_file.figure(
            f"{name}: wall time of the census", "ms", round(statistics.median(wall[name]) / 1000, 2),
            None, None, None, "value", "≤ 500 ms (its time bound)"))
    load = os.getloadavg()[0]
    result_file.write(a.result, figures, conditions=f"load {load:.1f}, {a.rounds} rounds, tmpfs",
                      results_dir=a.results_dir)


if __name__ == "__main__":
    main()
