#!/usr/bin/env python3
"""The systemd units as configured by the build: `systemd-analyze verify`
accepts them (with ExecStart= pointed at the binaries just built), their
Documentation= names man pages the build generated, and the offline
`systemd-analyze security` exposure stays at or below what the sandbox
reached when it was written (a loosened directive shows up as a higher
score). Exit 77 without systemd-analyze."""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

# Exposure measured with systemd 252 (Debian 12) when the sandboxes were set.
MAX_EXPOSURE = {
    "daxprobe-agent.service": 2.0,
    "daxprobe-check.service": 2.0,
    "daxprobe-collector.service": 1.6,
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--unit", action="append", default=[])
    ap.add_argument("--bin", action="append", default=[], help="NAME=PATH")
    ap.add_argument("--man", action="append", default=[], help="generated man page")
    a = ap.parse_args()
    if not shutil.which("systemd-analyze"):
        print("SKIP: systemd-analyze not found (apt-get install systemd)")
        sys.exit(77)
    bins = dict(b.split("=", 1) for b in a.bin)
    mans = {os.path.basename(m) for m in a.man}
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for unit in a.unit:
            text = open(unit).read()
            m = re.search(r"^ExecStart=(\S+)", text, re.M)
            prog = os.path.basename(m[1])
            if prog not in bins:
                failures.append(f"{unit}: ExecStart runs {m[1]}, not a program of this build")
                continue
            text = text.replace(m[1], os.path.abspath(bins[prog]), 1)
            for doc in re.findall(r"^Documentation=(.*)$", text, re.M):
                for ref in doc.split():
                    mm = re.fullmatch(r"man:([\w.-]+)\((\d)\)", ref)
                    if not mm:
                        failures.append(f"{unit}: Documentation={ref} is not a man page we ship")
                    elif f"{mm[1]}.{mm[2]}" not in mans:
                        failures.append(f"{unit}: Documentation={ref}: the build made no such page")
            path = os.path.join(tmp, os.path.basename(unit))
            with open(path, "w") as f:
                f.write(text)
            paths.append(path)
        r = subprocess.run(["systemd-analyze", "verify", "--man=no", *paths],
                           capture_output=True, text=True)
        print(f"systemd-analyze verify: rc {r.returncode} {r.stdout}{r.stderr}")
        if r.returncode != 0 or r.stderr.strip():
            failures.append("systemd-analyze verify complains")
        for path in paths:
            name = os.path.basename(path)
            r = subprocess.run(["systemd-analyze", "security", "--offline=true", path],
                               capture_output=True, text=True)
            m = re.search(r"Overall exposure level for \S+: ([\d.]+)", r.stdout + r.stderr)
            if not m:
                failures.append(f"{name}: no exposure level from systemd-analyze security")
                continue
            score = float(m[1])
            print(f"{name}: exposure {score} (at most {MAX_EXPOSURE.get(name)})")
            if name in MAX_EXPOSURE and score > MAX_EXPOSURE[name]:
                failures.append(f"{name}: exposure {score} > {MAX_EXPOSURE[name]}: "
                                + " ".join(l for l in r.stdout.splitlines() if l.startswith("✗")))
    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
