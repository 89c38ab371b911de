#!/usr/bin/env python3
"""`daxprobe check` on hostile input, run as a subprocess with a hang guard.

Each case must end with a clear verdict or error (issue 11, items 4 and 8):
--path on a FIFO, a directory, a device and a dangling symlink; --root and
--replay trees holding a FIFO; a capture whose links lead out of it; a
malformed live.json. A case that blocks is killed by the guard and fails; it
never hangs the suite. Usage: check_hostile_paths.py BUILD/agent/daxprobe
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HANG_GUARD_S = 30  # a guard against a hang, not a timing threshold (a case takes < 1 s)
FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures", "fsdax-xfs")
failures = []


def run(daxprobe, *args, user=None):
    try:
        p = subprocess.run([daxprobe, "check", "--json", "--no-active", *args], capture_output=True,
                           timeout=HANG_GUARD_S, stdin=subprocess.DEVNULL, user=user, group=user)
    except subprocess.TimeoutExpired:
        return None, None, "HUNG"
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        doc = None
    return p.returncode, doc, p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace")


def expect(name, ok, detail):
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else f": {detail}"))
    if not ok:
        failures.append(name)


def file_error(doc, path):
    for f in (doc or {}).get("files") or []:
        if f.get("path") == path:
            return " ".join(str(v) for v in ((f.get("residency") or {}).get("reason"), f.get("error")))
    return ""


def main():
    daxprobe = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="daxprobe-hostile-")
    try:
        fifo = os.path.join(tmp, "fifo")
        os.mkfifo(fifo)
        os.mkdir(os.path.join(tmp, "dir"))
        os.symlink(os.path.join(tmp, "nowhere"), os.path.join(tmp, "dangling"))
        cases = [("FIFO", fifo, "a FIFO"), ("directory", os.path.join(tmp, "dir"), "a directory"),
                 ("dangling symlink", os.path.join(tmp, "dangling"), "No such file"),
                 ("device", "/dev/null", "a character device")]
        for name, path, want in cases:
            rc, doc, out = run(daxprobe, "--path", path)
            err = file_error(doc, path)
            expect(f"--path on a {name}", out != "HUNG" and doc is not None and want in err,
                   f"rc={rc} error={err!r} output={out[:300]!r}")

        # Unprivileged: perf, /dev/kmsg, NFIT and ndctl may be refused; a verdict all the same.
        if os.geteuid() == 0:
            rc, doc, out = run(daxprobe, user=65534)
            expect("live check as an unprivileged user", out != "HUNG" and doc is not None
                   and rc in (0, 1, 2) and (doc.get("verdict") or {}).get("code"), f"rc={rc} {out[:300]!r}")
        else:
            print("note: not root, the unprivileged case runs as this user")
            rc, doc, out = run(daxprobe)
            expect("live check as this user", doc is not None and rc in (0, 1, 2), f"rc={rc} {out[:300]!r}")

        # A capture holding a FIFO, then one whose links lead out of it.
        cap = os.path.join(tmp, "cap")
        shutil.copytree(FIXTURE, cap, symlinks=True)
        os.remove(os.path.join(cap, "proc/meminfo"))
        os.mkfifo(os.path.join(cap, "proc/meminfo"))
        os.remove(os.path.join(cap, "dev/kmsg"))
        os.mkfifo(os.path.join(cap, "dev/kmsg"))
        rc, doc, out = run(daxprobe, "--replay", cap)
        expect("--replay with FIFOs in the capture", out != "HUNG" and doc is not None
               and "FIFO" in str(doc.get("meminfo_error")), f"rc={rc} {out[:300]!r}")
        rc, doc, out = run(daxprobe, "--root", cap)
        expect("--root with FIFOs in the tree", out != "HUNG" and doc is not None, f"rc={rc} {out[:300]!r}")

        secret = os.path.join(tmp, "shadow")
        with open(secret, "w") as f:
            f.write("SECRET-FIRST-LINE\n")
        rel = os.path.join(cap, "proc/sys/kernel/osrelease")
        os.remove(rel)
        os.symlink(secret, rel)
        os.remove(os.path.join(cap, "proc/vmstat"))
        os.symlink("../../" + os.path.relpath(secret, tmp), os.path.join(cap, "proc/vmstat"))
        rc, doc, out = run(daxprobe, "--replay", cap)
        expect("--replay does not follow links out of the capture", out != "HUNG" and doc is not None
               and "SECRET" not in out, f"rc={rc} {out[:300]!r}")

        for name, text, want in [("an array", "[]", "top level must be an object"),
                                 ("namespaces as strings", '{"topology":{"namespaces":["a","b"]}}',
                                  "namespaces[0] must be an object")]:
            with open(os.path.join(cap, "live.json"), "w") as f:
                f.write(text)
            rc, doc, out = run(daxprobe, "--replay", cap)
            summary = ((doc or {}).get("verdict") or {}).get("summary", "")
            expect(f"live.json as {name} is an error", rc == 2 and want in summary and not doc.get("namespaces"),
                   f"rc={rc} summary={summary!r}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print(f"{len(failures)} case(s) failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
