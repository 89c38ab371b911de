#!/usr/bin/env python3
"""Under systemd the programs log to the journal with a priority per line.
systemd connects a service's stderr to the journal and names that stream in
$JOURNAL_STREAM (DEV:INODE, systemd.exec(5)); journald reads a "<N>" prefix
at the start of each line as its syslog priority (sd-daemon(3)). This runs
the real daxprobe-collector with $JOURNAL_STREAM naming its stderr and reads
what it wrote: a missing --watch-dir is a warning (<4>), the start an info
(<6>), a bad state dir an error (<3>), and no line carries a timestamp (the
journal adds its own). With $JOURNAL_STREAM naming another stream (stderr
redirected elsewhere by the user) or unset, lines are plain, unprefixed.

With --check DAXPROBE FIXTURES it runs `daxprobe check` as the boot check's
unit does (daxprobe-check.service: stdout is the journal) on captures with
warnings (dax-inode) and problems (raw-xfs): each line's priority is its verdict's severity, so
`journalctl -p warning` shows warnings and `-p err` only problems."""
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time


def run_logged(collector, args, journal):
    """The collector with stderr on a pipe; JOURNAL_STREAM names that pipe
    ("this"), another stream ("other") or is unset."""
    r, w = os.pipe()
    st = os.fstat(w)
    env = {k: v for k, v in os.environ.items() if k != "JOURNAL_STREAM"}
    if journal == "this":
        env["JOURNAL_STREAM"] = f"{st.st_dev}:{st.st_ino}"
    elif journal == "other":
        env["JOURNAL_STREAM"] = f"{st.st_dev}:{st.st_ino + 1}"
    p = subprocess.Popen([collector, "run", *args], stderr=w, env=env)
    os.close(w)
    # Unbuffered: a line left in a reader's buffer would hide from select().
    return p, os.fdopen(r, "rb", buffering=0)


def lines_until(stream, needle, bound_s=60):
    """Lines read until one contains needle, or EOF, or the bound (a hang)."""
    lines = []
    deadline = time.monotonic() + bound_s
    while time.monotonic() < deadline:
        ready, _, _ = select.select([stream], [], [], deadline - time.monotonic())
        if not ready:
            break
        line = stream.readline().decode(errors="replace")
        if not line:
            break
        lines.append(line.rstrip("\n"))
        if needle and needle in line:
            break
    return lines


PRIORITY_OF = ((re.compile(r"^\s*FAIL "), "<3>"), (re.compile(r"^\s*WARN "), "<4>"),
               (re.compile(r"^\s*warning[: ]"), "<4>"), (re.compile(r"^\s*OK "), "<6>"))


def check_report(daxprobe, fixtures):
    """daxprobe check's reports on a journal stream: a verdict's mark decides
    its line's priority; a warning is never filed as an error."""
    failures, seen = [], set()
    for capture in ("dax-inode", "raw-xfs"):
        failures += check_lines(journal_lines(daxprobe, os.path.join(fixtures, capture)), seen)
    for want in ("<3>", "<4>", "<6>"):
        if want not in seen:
            failures.append(f"the captures gave no {want} verdict line to check")
    return failures


def journal_lines(daxprobe, capture):
    r, w = os.pipe()
    st = os.fstat(w)
    env = dict(os.environ, JOURNAL_STREAM=f"{st.st_dev}:{st.st_ino}")
    p = subprocess.Popen([daxprobe, "check", "--replay", capture], stdout=w,
                         stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env=env)
    os.close(w)
    with os.fdopen(r, "rb") as out:
        lines = out.read().decode(errors="replace").splitlines()
    p.wait(timeout=60)
    return lines


def check_lines(lines, seen):
    failures = []
    for l in lines:
        m = re.match(r"<([0-7])>", l)
        if not m:
            if l:
                failures.append(f"a line without a priority prefix: {l!r}")
            continue
        text = l[3:]
        for pattern, want in PRIORITY_OF:
            if pattern.match(text):
                seen.add(want)
                if not l.startswith(want):
                    failures.append(f"{want} wanted: {l!r}")
    return failures


def main():
    if sys.argv[1] == "--check":
        failures = check_report(sys.argv[2], sys.argv[3])
        for f in failures:
            print("FAIL:", f)
        print(f"daxprobe check on a journal stream: {len(failures)} failure(s)")
        sys.exit(1 if failures else 0)
    collector = sys.argv[1]
    failures = []
    tmp = tempfile.mkdtemp()
    missing = os.path.join(tmp, "libvirt", "channel", "target")
    args = ["--state-dir", tmp, "--watch-dir", missing, "--metrics-listen", ""]

    p, out = run_logged(collector, args, "this")
    try:
        lines = lines_until(out, "watched dir")
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=60)
    for l in lines:
        print("journal stream:", l)
    warn = [l for l in lines if "does not exist (yet)" in l]
    if not warn or not warn[0].startswith("<4>"):
        failures.append("the missing watch dir is not a <4> (warning) line")
    start = [l for l in lines if "watched dir" in l]
    if not start or not start[0].startswith("<6>"):
        failures.append("the start line is not a <6> (info) line")
    if any(not re.match(r"<[0-7]>", l) for l in lines):
        failures.append("a line without a priority prefix")
    if any(re.search(r"\d\d:\d\d:\d\d", l) for l in lines):
        failures.append("a timestamp in a journal line (the journal adds its own)")

    bad, out = run_logged(collector, ["--state-dir", "/proc/1/nonexistent", "--socket",
                                      "x=/nonexistent"], "this")
    lines = lines_until(out, None)
    rc = bad.wait(timeout=60)
    print("journal stream:", lines)
    if rc != 2 or not any(l.startswith("<3>") and "state directory" in l for l in lines):
        failures.append(f"a bad state dir: rc {rc}, no <3> (error) line")

    # Not the journal (unset, or naming another stream): plain lines.
    for journal in ("unset", "other"):
        plain, out = run_logged(collector, ["--state-dir", "/proc/1/nonexistent", "--socket",
                                            "x=/nonexistent"], journal)
        text = "\n".join(lines_until(out, None))
        plain.wait(timeout=60)
        if "state directory" not in text or re.search(r"^<\d>", text, re.M):
            failures.append(f"JOURNAL_STREAM {journal}: not a plain stderr line: {text!r}")
    shutil.rmtree(tmp)
    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
