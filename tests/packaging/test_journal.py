#!/usr/bin/env python3
"""Under systemd the programs log to the journal with a priority per line.
systemd says so through $JOURNAL_STREAM (the DEV:INODE of the stderr it
connected); the collector then sends native journal entries. This runs the
real daxprobe-collector with $JOURNAL_STREAM naming its stderr and a journal
socket of our own, bound in a private mount namespace at the path libsystemd
sends to (/run/systemd/journal/socket), and reads the entries: a missing
--watch-dir is a warning (PRIORITY=4), the start an info (6), a bad state dir
an error (3). Without $JOURNAL_STREAM the same lines go to stderr. Root only
(a mount namespace), else exit 77."""
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile


def entries(sock, until, limit=50):
    """Journal datagrams as dicts, until one satisfies `until`."""
    got = []
    for _ in range(limit):
        try:
            data = sock.recv(65536).decode(errors="replace")
        except socket.timeout:
            print("no journal entry within the bound")
            return got or [{}]
        e = dict(l.split("=", 1) for l in data.splitlines() if "=" in l)
        got.append(e)
        if until(e):
            return got
    return got


def inner(collector):
    failures = []
    tmp = tempfile.mkdtemp()
    subprocess.run(["mount", "--make-rprivate", "/"], check=True)
    os.makedirs("/run/systemd/journal", exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "tmpfs", "/run/systemd/journal"], check=True)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind("/run/systemd/journal/socket")
    sock.settimeout(20)  # a bound on a hang, not a synchronisation

    def run(args, stderr_path):
        err = open(stderr_path, "w")
        st = os.fstat(err.fileno())
        env = dict(os.environ, JOURNAL_STREAM=f"{st.st_dev}:{st.st_ino}")
        return subprocess.Popen([collector, "run", *args], stderr=err, env=env)

    missing = os.path.join(tmp, "libvirt", "channel", "target")
    p = run(["--state-dir", tmp, "--watch-dir", missing, "--metrics-listen", ""],
            os.path.join(tmp, "stderr1"))
    try:
        got = entries(sock, lambda e: "watched dir" in e.get("MESSAGE", ""))
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=60)
    for e in got:
        print(f"journal: PRIORITY={e.get('PRIORITY')} MESSAGE={e.get('MESSAGE')}")
    prio = {e.get("MESSAGE", ""): e.get("PRIORITY") for e in got}
    warn = [m for m in prio if "does not exist (yet)" in m]
    if not warn or prio[warn[0]] != "4":
        failures.append("the missing watch dir is not a PRIORITY=4 journal entry")
    start = [m for m in prio if "watched dir" in m]
    if not start or prio[start[0]] != "6":
        failures.append("the start line is not a PRIORITY=6 journal entry")
    if open(os.path.join(tmp, "stderr1")).read().strip():
        failures.append("lines went to stderr as well as to the journal")

    bad = run(["--state-dir", "/proc/1/nonexistent", "--socket", "x=/nonexistent"],
              os.path.join(tmp, "stderr2"))
    rc = bad.wait(timeout=60)
    got = entries(sock, lambda e: e.get("PRIORITY") == "3")
    print(f"journal: PRIORITY={got[-1].get('PRIORITY')} MESSAGE={got[-1].get('MESSAGE')}")
    if rc != 2 or got[-1].get("PRIORITY") != "3":
        failures.append(f"a bad state dir: rc {rc}, not a PRIORITY=3 entry")

    # Not under systemd: stderr, no journal.
    r = subprocess.run([collector, "run", "--state-dir", "/proc/1/nonexistent", "--socket",
                        "x=/nonexistent"], capture_output=True, text=True,
                       env={k: v for k, v in os.environ.items() if k != "JOURNAL_STREAM"})
    if "state directory" not in r.stderr:
        failures.append(f"without JOURNAL_STREAM the error is not on stderr: {r.stderr!r}")
    shutil.rmtree(tmp)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--inner":
        sys.exit(inner(sys.argv[2]))
    if os.geteuid() != 0:
        print("SKIP: needs root for a private mount namespace (unshare --mount)")
        sys.exit(77)
    if not shutil.which("unshare"):
        print("SKIP: unshare not found (util-linux)")
        sys.exit(77)
    r = subprocess.run(["unshare", "--mount", sys.executable, __file__, "--inner", sys.argv[1]])
    sys.exit(r.returncode)


if __name__ == "__main__":
    main()
