#!/usr/bin/env python3
"""A store that never acks what it did not keep (issue 31), black box.

The real collector as a process, a scripted guest that keeps its own books
(what it sent, the highest seq acknowledged), the store read by the `sqlite3`
shell, small real filesystems.

usage: store_faults.py COLLECTOR [CASE...]
cases: schema-drift, pinned-wal, option-ranges, shm-symlink, hostile-schema,
       spent-sequence, schema-live
"""
import json
import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import zlib

import blackbox as bb
from blackbox import Failure, check

COLLECTOR = sys.argv[1]


def line(obj):
    return (json.dumps(obj, separators=(",", ":")) + "\n").encode()


class Guest:
    """A QEMU chardev socket with an agent behind it that sends numbered
    reports, keeps each until an ack covers it and resends them after a sync."""

    def __init__(self, path, stream, pad=1500):
        if os.path.exists(path):
            os.unlink(path)
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(path)
        self.server.listen(4)
        self.path, self.stream, self.pad = path, stream, pad
        self.sock, self.buf, self.last, self.acked = None, b"", 0, 0

    def accept(self, what="the guest", timeout=bb.HANG_GUARD_S):
        self.server.settimeout(timeout)
        try:
            self.sock, _ = self.server.accept()
        except socket.timeout:
            raise Failure(f"hang guard: the collector never connected: {what}")
        self.buf = b""
        self.sock.sendall(b"\xff" + line({"event": "greeting", "data": {
            "protocol": 1, "agent": {"name": "daxprobe", "version": "scripted",
                                     "machine_id": "0" * 32, "hostname": "scripted",
                                     "stream": self.stream},
            "capabilities": {}}, "timestamp": {"seconds": 1, "microseconds": 0}}))

    def report(self, seq):
        return line({"event": "report", "data": {
            "stream": self.stream, "seq": seq, "reason": "interval", "dropped_reports": 0,
            "report": {"schema": "daxprobe.check/1", "verdict": {"code": "dax_verified"},
                       "pad": "p" * self.pad}}})

    def pump(self, cond, what, window=8, timeout=bb.HANG_GUARD_S):
        """Sends reports (at most `window` unacknowledged) and answers the
        collector until cond() holds; a hang-up waits for the next connection."""
        deadline = time.monotonic() + timeout
        while not cond():
            check(time.monotonic() < deadline,
                  f"hang guard: {what} (sent {self.last}, acked {self.acked})")
            if self.sock is None:
                self.accept(what)
            if self.last - self.acked < window:
                self.last += 1
                self.sock.sendall(self.report(self.last))
                continue
            r, _, _ = select.select([self.sock], [], [], 0.2)  # a bound on one wait, not a sync
            data = self.sock.recv(1 << 16) if r else None
            if data == b"":
                self.sock.close()
                self.sock = None
                continue
            self.buf += data or b""
            *lines, self.buf = self.buf.split(b"\n")
            for raw in lines:
                m = json.loads(raw.replace(b"\xff", b"") or b"{}")
                if m.get("execute") == "ack":
                    self.acked = max(self.acked, m["arguments"]["seq"])
                    self.sock.sendall(line({"return": {"acked": 1}, "id": "ack"}))
                elif m.get("execute") == "sync":
                    resend = b"".join(self.report(q) for q in range(self.acked + 1, self.last + 1))
                    self.sock.sendall(b"\xff" + line({"return": m["arguments"]["id"],
                                                      "id": m.get("id")}) + resend)

    def close(self):
        if self.sock:
            self.sock.close()
        self.server.close()


def stored(db, stream):
    return set(bb.stored_seqs(db, stream))


def books(db, g, rows=None):
    """Everything acknowledged is stored, once (with --max-rows: of the
    newest `rows` stored, as the oldest go first)."""
    seqs = bb.stored_seqs(db, g.stream)
    check(len(seqs) == len(set(seqs)), f"duplicates stored: {seqs[:20]}")
    first = max(1, max(seqs, default=0) - rows + 1) if rows else 1
    missing = sorted(set(range(first, g.acked + 1)) - set(seqs))
    check(not missing, f"{len(missing)} acknowledged reports are not in the store: "
                       f"{missing[:10]} (acked up to {g.acked}, {len(seqs)} stored)")


def case_schema_drift():
    """A reports table with one NOT NULL column more (no default), as after
    a rollback from a newer collector: the collector refuses it at open,
    saying what differs; it never acks a report it did not store."""
    tmp = tempfile.mkdtemp(prefix="dxschema-")
    state, db = os.path.join(tmp, "state"), os.path.join(tmp, "state", "collector.db")
    os.mkdir(state)
    g, c = Guest(os.path.join(tmp, "guest.sock"), "5c4e"), None
    try:
        c = bb.start_collector(COLLECTOR, state, [("vm", g.path)], extra=["--guest-rate", "1000"])
        g.accept()
        g.pump(lambda: g.acked >= 20, "20 reports acknowledged")
        c.kill(15)
        check(c.wait_exit() == 0, f"collector exit after SIGTERM:\n{c.log()}")
        books(db, g)
        before = len(stored(db, g.stream))
        bb.sqlite(db, "ALTER TABLE reports RENAME TO old; DROP INDEX reports_by_vm;"
                      "CREATE TABLE reports (id INTEGER PRIMARY KEY AUTOINCREMENT, "
                      "vm TEXT NOT NULL, stream TEXT NOT NULL, seq INTEGER NOT NULL, "
                      "received_at INTEGER NOT NULL, reason TEXT NOT NULL, verdict TEXT NOT NULL, "
                      "report TEXT NOT NULL, metrics TEXT, bytes INTEGER NOT NULL DEFAULT 0, "
                      "tenant TEXT NOT NULL, UNIQUE (vm, stream, seq));"
                      "INSERT INTO reports SELECT *, 'a' FROM old; DROP TABLE old;"
                      "CREATE INDEX reports_by_vm ON reports (vm, id)")
        g.close()
        g = Guest(g.path, "5c4f")
        c = bb.start_collector(COLLECTOR, state, [("vm", g.path)], extra=["--guest-rate", "1000"])
        # Either it refuses the store, or whatever it acks is stored: while
        # it runs, the guest keeps sending.
        def refused_or_acked():
            return not c.alive() or g.acked >= 100
        try:
            g.accept("the second run", timeout=5)  # a refusing collector never connects
            g.pump(refused_or_acked, "a refusal, or 100 acks")
        except (Failure, OSError):
            pass  # the collector exited: there is nobody to pump
        books(db, g)
        rc = c.wait_exit() if not c.alive() else None
        check(rc == 2, f"the collector runs on a store it cannot write (acked {g.acked}):\n{c.log()}")
        log = c.log()
        check("tenant" in log and "not the one this collector writes" in log,
              f"the refusal does not say what differs:\n{log}")
        check(len(stored(db, "5c4e")) == before, "rows of the first run changed")
        print(f"schema-drift: refused at open, exit {rc}: "
              f"{[l for l in log.splitlines() if 'tenant' in l][0][-160:]}")
    finally:
        if c:
            c.kill()
        g.close()
        shutil.rmtree(tmp, ignore_errors=True)


def metrics_port(c):
    got = c.wait_log(lambda l: "metrics on port" in l, "the /metrics port")
    return int(got.split("metrics on port ")[1].split()[0])


def scrape(port, name):
    with socket.create_connection(("127.0.0.1", port), timeout=bb.HANG_GUARD_S) as s:
        s.sendall(b"GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n")
        data = b""
        while chunk := s.recv(1 << 16):
            data += chunk
    for l in data.decode(errors="replace").splitlines():
        if l.startswith(name + " "):
            return float(l.rsplit(" ", 1)[1])
    return None


def sizes(state):
    def size(f):
        p = os.path.join(state, f)
        return os.stat(p).st_blocks * 512 if os.path.exists(p) else 0
    return size("collector.db"), size("collector.db-wal")


def case_pinned_wal():
    """An 8 MiB state filesystem and a reader that holds a read transaction
    (the sqlite3 shell, as a backup or a dashboard would): the log stops at
    its cap instead of filling the filesystem, nothing is acked meanwhile,
    /metrics and the log name the pinning, and once the reader leaves the
    collector resumes by itself, also after a restart."""
    if os.geteuid() != 0:
        bb.skip("needs root to mount a tmpfs as the state directory")
    tmp = tempfile.mkdtemp(prefix="dxpin-")
    state = os.path.join(tmp, "state")
    os.mkdir(state)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", state]).returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        bb.skip("cannot mount a tmpfs here")
    db = os.path.join(state, "collector.db")
    g, c, reader = Guest(os.path.join(tmp, "guest.sock"), "91a"), None, None
    argv = ["--guest-rate", "100000", "--max-rows", "200"]
    try:
        c = bb.start_collector(COLLECTOR, state, [("vm", g.path)], extra=argv, metrics="127.0.0.1:0")
        port = metrics_port(c)
        g.accept()
        g.pump(lambda: g.acked >= 300, "300 reports acknowledged", window=1)
        # The reader's transaction is open once its SELECT has answered.
        reader = subprocess.Popen(["sqlite3", "-batch", db], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        reader.stdin.write("BEGIN; SELECT count(*) FROM reports;\n")
        reader.stdin.flush()
        check(reader.stdout.readline().strip().isdigit(), "the reader's SELECT did not answer")
        pinned_at = g.acked
        peak = [0, 0]

        def withheld():
            d, w = sizes(state)
            peak[0], peak[1] = max(peak[0], d), max(peak[1], w)
            return "acks withheld" in c.log()
        g.pump(withheld, "acks withheld while the reader pins the log", window=1)
        # The log line and the metric name the pinning.
        c.wait_log(lambda l: "pins the store's write-ahead log" in l and f"pid {reader.pid}" in l,
                   "the pinning, with the reader's pid")
        check(scrape(port, "daxprobe_collector_wal_pinned") == 1, "daxprobe_collector_wal_pinned is not 1")
        cap = scrape(port, "daxprobe_collector_wal_cap_bytes")
        # Some more traffic while pinned: the log stays put, nothing is acked.
        held = g.acked
        g.pump(lambda: g.last >= held + 40, "40 more reports sent while pinned", window=60)
        withheld()
        check(g.acked == held, f"acked {g.acked - held} reports while the log was pinned")
        dbb, walb = peak
        print(f"pinned-wal: pinned after {pinned_at} acks; peak database {dbb >> 10} KiB, "
              f"log {walb >> 10} KiB (cap {int(cap or 0) >> 10} KiB) on an 8 MiB fs", flush=True)
        # README's disk rule: the log adds at most the database's size again
        # (below 512 KiB it is not held back), give or take one batch.
        check(walb <= max(dbb, 512 << 10) + (256 << 10),
              f"the log grew to {walb >> 10} KiB against a {dbb >> 10} KiB database")
        reader.stdin.write("COMMIT;\n.quit\n")
        reader.stdin.close()
        reader.wait(timeout=bb.HANG_GUARD_S)
        reader = None
        goal = g.last + 100
        g.pump(lambda: g.acked >= goal, "acks resume once the reader has left", window=8)
        c.wait_log(lambda l: "no longer pinned" in l, "the end of the pinning")
        check(scrape(port, "daxprobe_collector_wal_pinned") == 0, "still pinned after the reader left")
        books(db, g, 200)
        print(f"pinned-wal: resumed by itself: {g.acked} acknowledged; log now "
              f"{sizes(state)[1] >> 10} KiB", flush=True)
        c.kill(15)
        check(c.wait_exit() == 0, f"collector exit after SIGTERM:\n{c.log()}")
        c = bb.start_collector(COLLECTOR, state, [("vm", g.path)], extra=argv)
        g.sock.close()
        g.sock = None
        goal = g.last + 100
        g.pump(lambda: g.acked >= goal, "acks after a restart", window=8)
        books(db, g, 200)
    finally:
        if reader:
            reader.kill()
        if c:
            c.kill()
        g.close()
        subprocess.run(["umount", "-l", state])
        shutil.rmtree(tmp, ignore_errors=True)


def case_option_ranges():
    """Every numeric option, on the command line and in the config file, at
    its edges: refused at once with exit 2 and the range; none makes the
    collector start (and spin)."""
    tmp = tempfile.mkdtemp(prefix="dxrange-")
    conf = os.path.join(tmp, "collector.conf")
    problems = []
    try:
        edges = ["0", "-1", "18446744073709551616", "18446744073709551615", "1e19", "inf", "nan"]
        for opt in ["max-rows", "max-bytes", "max-guests", "guest-rate", "guest-byte-rate"]:
            for v in edges:
                for how in ("cli", "config"):
                    argv = [COLLECTOR, "run", "--state-dir", tmp, "--metrics-listen", "",
                            "--socket", f"vm={tmp}/none.sock"]
                    if how == "cli":
                        argv += [f"--{opt}", v] if not v.startswith("-") else [f"--{opt}={v}"]
                    else:
                        with open(conf, "w") as f:
                            f.write(f"{opt} {v}\n")
                        argv += ["--config", conf]
                    try:
                        # A refusal takes milliseconds; a collector that started runs on.
                        p = subprocess.run(argv, capture_output=True, text=True, timeout=5)
                    except subprocess.TimeoutExpired:
                        problems.append(f"{how} {opt} {v}: still running after 5 s")
                        continue
                    if p.returncode != 2 or "out of range: give" not in p.stderr:
                        problems.append(f"{how} {opt} {v}: exit {p.returncode}: "
                                        f"{p.stderr.strip()[-120:]}")
        p = subprocess.run([COLLECTOR, "query", "--state-dir", tmp, "--limit", "-1"],
                           capture_output=True, text=True, timeout=10)
        if p.returncode != 2 or "out of range" not in p.stderr:
            problems.append(f"query --limit -1: exit {p.returncode}: {p.stderr.strip()[-120:]}")
        check(not problems, "\n  ".join([f"{len(problems)} accepted:"] + problems))
        print(f"option-ranges: 5 options x {len(edges)} edges x (flag, config): all refused, exit 2")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def case_shm_symlink():
    """A collector.db-shm that is a symbolic link: refused with a message
    that says so (SQLite's own is "disk I/O error")."""
    tmp = tempfile.mkdtemp(prefix="dxshm-")
    try:
        victim = os.path.join(tmp, "victim")
        with open(victim, "w") as f:
            f.write("keep")
        os.symlink(victim, os.path.join(tmp, "collector.db-shm"))
        p = subprocess.run([COLLECTOR, "run", "--state-dir", tmp, "--metrics-listen", "",
                            "--socket", f"vm={tmp}/none.sock"],
                           capture_output=True, text=True, timeout=bb.HANG_GUARD_S)
        check(p.returncode == 2 and "collector.db-shm is a symbolic link" in p.stderr,
              f"exit {p.returncode}: {p.stderr.strip()[-300:]}")
        with open(victim) as f:
            check(f.read() == "keep", "the link's target was written")
        print(f"shm-symlink: {p.stderr.strip().splitlines()[-1][-160:]}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def stored_count(db, stream):
    # Through SQLite's own lookup: the table may be named "REPORTS".
    return int(bb.sqlite(db, f"SELECT count(*) FROM reports WHERE stream = '{stream}'")[0][0])


def refused_at_open(tmp, tag, change, says, remedy=None):
    """A store with 5 acknowledged reports, changed by `change` with the
    collector stopped: the next start refuses it (exit 2, `says` in its log)
    and acks nothing it did not store. With `remedy`, the operator's fix
    is applied after and the collector stores and acks again."""
    state = os.path.join(tmp, tag)
    os.mkdir(state)
    db = os.path.join(state, "collector.db")
    first, second = ("%08x" % zlib.crc32(tag.encode()) + s for s in ("a", "b"))  # hex, as agents'
    g, c = Guest(os.path.join(tmp, tag + ".sock"), first), None
    try:
        c = bb.start_collector(COLLECTOR, state, [("vm", g.path)], extra=["--guest-rate", "1000"])
        g.accept()
        g.pump(lambda: g.acked >= 5, "5 reports acknowledged")
        c.kill(15)
        check(c.wait_exit() == 0, f"collector exit after SIGTERM:\n{c.log()}")
        before = stored_count(db, g.stream)
        bb.sqlite(db, change)
        g.close()
        g = Guest(g.path, second)
        c = bb.start_collector(COLLECTOR, state, [("vm", g.path)], extra=["--guest-rate", "1000"])
        deadline = time.monotonic() + 10
        while c.alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        if c.alive():  # it runs on the store: whatever it acks must be there
            g.accept(f"{tag}: the second run")
            g.pump(lambda: g.acked >= 20 or not c.alive(), f"{tag}: 20 acks or an exit")
            check(g.acked <= stored_count(db, g.stream),
                  f"{tag}: acked {g.acked} reports, stored {stored_count(db, g.stream)}")
        rc = c.wait_exit()
        log = c.log()
        check(rc == 2, f"{tag}: the collector runs on the changed store (exit {rc}):\n{log}")
        check(says in log, f"{tag}: the refusal does not say {says!r}:\n{log}")
        check(g.acked == 0, f"{tag}: acked {g.acked} while refusing")
        check(stored_count(db, first) == before, f"{tag}: rows of the first run changed")
        print(f"{tag}: refused, exit 2: {[l for l in log.splitlines() if says in l][0][-200:]}",
              flush=True)
        if remedy:
            bb.sqlite(db, remedy)
            c = bb.start_collector(COLLECTOR, state, [("vm", g.path)],
                                   extra=["--guest-rate", "1000"])
            g.accept(f"{tag}: the run after the remedy")
            g.pump(lambda: g.acked >= 5, f"{tag}: 5 acks after the remedy")
            check(stored_count(db, g.stream) >= g.acked,
                  f"{tag}: acked {g.acked}, stored {stored_count(db, g.stream)}")
            print(f"{tag}: after the remedy, {g.acked} acknowledged and stored", flush=True)
    finally:
        if c:
            c.kill()
        g.close()


# Issue 45, item 1: each once acked 28-29 reports and stored none, or let
# `query` show a verdict the guest never sent, or skipped the check.
HOSTILE_SCHEMAS = [
    ("eat", "CREATE TRIGGER eat BEFORE INSERT ON REPORTS BEGIN SELECT RAISE(IGNORE); END;",
     "trigger eat on table REPORTS"),
    ("gone", "CREATE TRIGGER gone AFTER INSERT ON Reports BEGIN DELETE FROM reports "
             "WHERE id = new.id; END;", "trigger gone on table Reports"),
    ("lie", "CREATE TRIGGER lie AFTER UPDATE ON VMS BEGIN UPDATE vms SET verdict = "
            "'dax_verified' WHERE vm = new.vm; END;", "trigger lie on table VMS"),
    ("upper", "ALTER TABLE reports RENAME TO r0; ALTER TABLE r0 RENAME TO \"REPORTS\"; "
              "ALTER TABLE vms RENAME TO v0; ALTER TABLE v0 RENAME TO \"VMS\"; "
              "ALTER TABLE \"VMS\" ADD COLUMN tenant TEXT;",
     "vms: column tenant TEXT (no default) is not one this collector writes"),
]


def case_hostile_schema():
    """Triggers on the store's tables written in any case, and tables named
    "VMS"/"REPORTS": each refused at open, named; nothing acked."""
    tmp = tempfile.mkdtemp(prefix="dxhostile-")
    try:
        for tag, change, says in HOSTILE_SCHEMAS:
            refused_at_open(tmp, tag, change, says)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def case_spent_sequence():
    """sqlite_sequence at 2^63-1 for reports: SQLite refuses every insert
    with "database or disk is full" on an empty disk. Refused at open,
    naming the sequence and the UPDATE that resets it; once the operator
    runs it, the collector stores and acks again."""
    tmp = tempfile.mkdtemp(prefix="dxseq-")
    try:
        reset = "UPDATE sqlite_sequence SET seq = (SELECT max(id) FROM reports) WHERE name = 'reports'"
        refused_at_open(tmp, "spent",
                        "UPDATE sqlite_sequence SET seq = 9223372036854775807 WHERE name = 'reports';",
                        "the AUTOINCREMENT sequence of table reports reached its maximum",
                        remedy=reset)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def case_schema_live():
    """A trigger that swallows every insert, created with the sqlite3 shell
    while the collector runs: nothing more is acked (and everything acked
    is stored), the log names the trigger, and once it is dropped the
    collector stores and acks again by itself."""
    tmp = tempfile.mkdtemp(prefix="dxlive-")
    state, db = os.path.join(tmp, "state"), os.path.join(tmp, "state", "collector.db")
    os.mkdir(state)
    g, c = Guest(os.path.join(tmp, "guest.sock"), "7e11"), None
    try:
        c = bb.start_collector(COLLECTOR, state, [("vm", g.path)], extra=["--guest-rate", "1000"])
        g.accept()
        g.pump(lambda: g.acked >= 10, "10 reports acknowledged", window=1)
        bb.sqlite(db, "CREATE TRIGGER eat BEFORE INSERT ON REPORTS BEGIN SELECT RAISE(IGNORE); END;")
        held = g.acked
        g.pump(lambda: "trigger eat on table REPORTS" in c.log(), "the trigger named in the log",
               window=1)
        g.pump(lambda: g.last >= held + 20, "20 more reports sent under the trigger", window=30)
        books(db, g)
        check(g.acked <= held + 1, f"acked {g.acked - held} reports under the trigger")
        bb.sqlite(db, "DROP TRIGGER eat;")
        goal = g.last + 10
        g.pump(lambda: g.acked >= goal, "acks resume once the trigger is dropped", window=8)
        books(db, g)
        line = [l for l in c.log().splitlines() if "trigger eat" in l][0]
        print(f"schema-live: {g.acked} acknowledged and stored; under the trigger: {line[-160:]}")
    finally:
        if c:
            c.kill()
        g.close()
        shutil.rmtree(tmp, ignore_errors=True)


CASES = {"schema-drift": case_schema_drift, "pinned-wal": case_pinned_wal,
         "option-ranges": case_option_ranges, "shm-symlink": case_shm_symlink,
         "hostile-schema": case_hostile_schema, "spent-sequence": case_spent_sequence,
         "schema-live": case_schema_live}

if __name__ == "__main__":
    sys.exit(bb.main(CASES, sys.argv[2:]))
