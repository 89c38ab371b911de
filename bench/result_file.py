"""bench/results/NAME.json: a benchmark's headline figures, each with the
floor (or peer) it is read against in the same run, and the ratio; written
by the benchmark itself, with the command, the commit and the date.
bench/README.md's table cites these files; their history is git's.

  {"schema": "daxprobe.bench/1", "benchmark": NAME, "command": "bench/...",
   "commit": "abc1234" (+ "-dirty" when tracked files differed), "date": ISO 8601 UTC,
   "conditions": "load ...", "figures": [
     {"name", "unit", "value", "floor": {"name", "value"} or null, "ratio", "ratio_is", "goal"}],
   "note": only in files converted from an earlier run's figures}

`ratio` is as measured (a median of per-round ratios is not the ratio of
the medians), so it is given, not recomputed; `ratio_is` says which way.
"""

import datetime
import json
import os
import subprocess
import sys

SCHEMA = "daxprobe.bench/1"
SOURCE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS_DIR = os.path.join(SOURCE_ROOT, "bench", "results")


def figure(name, unit, value, floor_name, floor, ratio, ratio_is, goal=None):
    """One figure; floor_name None for one read against its goal only."""
    return {"name": name, "unit": unit, "value": value,
            "floor": {"name": floor_name, "value": floor} if floor_name else None,
            "ratio": ratio, "ratio_is": ratio_is, "goal": goal}


def ratio(a, b):
    """a / b to 3 significant decimals, None when b is 0 or either is missing."""
    return round(a / b, 3) if a is not None and b else None


def commit():
    """The tree the figures were measured with: HEAD, marked dirty when a
    tracked file differs from it (an untracked file changes no figure)."""
    def git(*argv):
        return subprocess.run(["git", "-C", SOURCE_ROOT, *argv], capture_output=True,
                              text=True)
    head = git("rev-parse", "--short", "HEAD")
    if head.returncode != 0:
        return "unknown (not a git checkout)"
    dirty = git("diff", "--quiet", "HEAD").returncode != 0
    return head.stdout.strip() + ("-dirty" if dirty else "")


def command_line(argv=None):
    """argv as typed from the source root (bench/NAME.py ARGS)."""
    argv = list(sys.argv if argv is None else argv)
    argv[0] = os.path.relpath(os.path.abspath(argv[0]), SOURCE_ROOT)
    return " ".join(argv)


def write(name, figures, conditions=None, results_dir=None, command=None, measured_at=None,
          date=None, note=None):
    """Write results_dir/NAME.json (default bench/results/); returns its path.
    measured_at, date, note: for figures converted from an earlier run (else
    HEAD, now, none)."""
    doc = {"schema": SCHEMA, "benchmark": name,
           "command": command or command_line(),
           "commit": measured_at or commit(),
           "date": date or datetime.datetime.now(datetime.timezone.utc)
           .strftime("%Y-%m-%dT%H:%M:%SZ"),
           "conditions": conditions, "figures": figures}
    if note:
        doc["note"] = note
    out_dir = results_dir or RESULTS_DIR
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"{name}.json")
    with open(path + ".tmp", "w") as f:
        json.dump(doc, f, indent=2, ensure_ascii=False)
        f.write("\n")
    os.replace(path + ".tmp", path)
    shown = os.path.relpath(path, SOURCE_ROOT) if path.startswith(SOURCE_ROOT + os.sep) else path
    print(f"result: {shown}", flush=True)
    return path


def main():
    """For the shell benchmarks, one figure read against its goal:
      result_file.py NAME CONDITIONS FIGURE UNIT VALUE [GOAL]
    BENCH_COMMAND, BENCH_COMMIT: what ran and the tree it ran (default: argv, HEAD)."""
    if len(sys.argv) not in (6, 7):
        print(main.__doc__, file=sys.stderr)
        return 2
    name, conditions, what, unit, value = sys.argv[1:6]
    goal = sys.argv[6] if len(sys.argv) == 7 else None
    write(name, [figure(what, unit, float(value), None, None, None, None, goal)],
          conditions=conditions, command=os.environ.get("BENCH_COMMAND"),
          measured_at=os.environ.get("BENCH_COMMIT"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
