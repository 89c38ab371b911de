"""Process-level helpers for the black-box fault tests (issue 11, item 8).

Everything here talks to the real programs only through what a user or a
guest sees: the `daxprobe agent --listen` socket, the collector's command
line, its exit status and log, and the store read by the `sqlite3` shell (an
independent reader, not the collector's own code). So the tests survive a
rewrite of the collector's event loop. Every wait has a deadline that fails
the test (a hang guard, never a timing threshold): waits are on conditions
(a line arriving, a process exiting, a row appearing), not on sleeps.
"""
import json
import os
import select
import socket
import subprocess
import threading
import time

HANG_GUARD_S = 60  # any single wait; a healthy run needs well under a second
FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures")


class Failure(Exception):
    pass


class Skip(Exception):
    pass


def check(ok, what):
    if not ok:
        raise Failure(what)


def skip(reason):
    raise Skip(reason)


def wait_until(cond, what, timeout=HANG_GUARD_S, interval=0.02):
    """Re-evaluates cond until it is true. Only for state no process can
    notify us about (rows in a database); fails after the hang guard."""
    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() > deadline:
            raise Failure(f"hang guard: {what} not reached in {timeout} s")
        time.sleep(interval)


STARTED = []  # every Proc; main() kills what a failed case left running


class Proc:
    """A child process whose stderr lines are collected by a thread; waits are
    on a condition variable fed by that thread."""

    def __init__(self, argv, name, user=None, stdout=subprocess.DEVNULL):
        STARTED.append(self)
        self.name = name
        self.lines = []
        self.cond = threading.Condition()
        self.eof = False
        kw = {}
        if user is not None:
            kw = {"user": user, "group": user, "extra_groups": []}
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=stdout,
                                     stderr=subprocess.PIPE, text=True, errors="replace", **kw)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stderr:
            with self.cond:
                self.lines.append(line.rstrip("\n"))
                self.cond.notify_all()
        with self.cond:
            self.eof = True
            self.cond.notify_all()

    def log(self):
        with self.cond:
            return "\n".join(self.lines)

    def wait_log(self, pred, what, timeout=HANG_GUARD_S):
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                hit = next((l for l in self.lines if pred(l)), None)
                if hit is not None:
                    return hit
                left = deadline - time.monotonic()
                if self.eof or left <= 0:
                    raise Failure(f"{self.name}: {what} never logged "
                                  f"({'it exited' if self.eof else 'hang guard'}); log:\n"
                                  + "\n".join(self.lines[-30:]))
                self.cond.wait(left)

    def wait_exit(self, timeout=HANG_GUARD_S):
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise Failure(f"hang guard: {self.name} did not exit in {timeout} s")
        self.reader.join(timeout=10)
        return rc

    def kill(self, sig=9):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            self.proc.wait(timeout=HANG_GUARD_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.reader.join(timeout=10)

    def alive(self):
        return self.proc.poll() is None


def start_agent(daxprobe, sock, fixture="fsdax-xfs", interval=1, max_pending=10000, user=None,
                root=None, extra=()):
    argv = [daxprobe, "agent", "--listen", sock, "--root", root or os.path.join(FIXTURES, fixture),
            "--no-active", "--interval", str(interval), "--max-pending", str(max_pending), *extra]
    return Proc(argv, f"agent {os.path.basename(sock)}", user=user)


def wait_socket(path, proc, timeout=HANG_GUARD_S):
    """Until something accepts connections at path (a probe connection)."""
    def ready():
        check(proc.alive(), f"{proc.name} exited:\n{proc.log()}")
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(path)
            return True
        except OSError:
            return False
        finally:
            s.close()
    wait_until(ready, f"{path} accepting", timeout)


class Conn:
    """One side of a line-protocol connection (a scripted host or guest)."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = b""

    @classmethod
    def connect(cls, path):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)
        return cls(s)

    def send(self, data):
        self.sock.sendall(data if isinstance(data, bytes) else data.encode())

    def send_msg(self, obj):
        self.send(json.dumps(obj, separators=(",", ":")) + "\n")

    def read_msg(self, timeout=HANG_GUARD_S):
        """The next JSON message (0xFF sentinels skipped); None at EOF."""
        deadline = time.monotonic() + timeout
        while True:
            self.buf = self.buf.replace(b"\xff", b"")
            nl = self.buf.find(b"\n")
            if nl >= 0:
                line, self.buf = self.buf[:nl], self.buf[nl + 1:]
                if line.strip():
                    return json.loads(line)
                continue
            left = deadline - time.monotonic()
            if left <= 0:
                raise Failure("hang guard: no message from the peer")
            r, _, _ = select.select([self.sock], [], [], left)
            if not r:
                continue
            try:
                chunk = self.sock.recv(1 << 16)
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                return None
            self.buf += chunk

    def wait_eof(self, timeout=HANG_GUARD_S):
        """Until the peer hangs up (reading and discarding what it sends)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Failure("hang guard: the peer never hung up")
            r, _, _ = select.select([self.sock], [], [], left)
            if r:
                try:
                    if not self.sock.recv(1 << 16):
                        return
                except (ConnectionResetError, BrokenPipeError):
                    return

    def close(self):
        self.sock.close()


class HostView:
    """What the agent holds, seen by a scripted host: the greeting, then the
    reports it resends (every unacknowledged one), then `info`'s return."""

    def __init__(self, greeting, resent, info):
        self.greeting, self.resent, self.info = greeting, resent, info
        self.stream = greeting["data"]["agent"]["stream"]


def look_at_agent(path, timeout=HANG_GUARD_S):
    """Connects as a host that acknowledges nothing and reads what the agent
    still holds. Reports arriving before info's return are unacknowledged.
    An agent that has not yet noticed its previous host hang up answers
    "another host is connected" and closes: then we ask again."""
    deadline = time.monotonic() + timeout
    while True:
        view = _look_once(path, timeout)
        if view is not None:
            return view
        check(time.monotonic() < deadline, "hang guard: the agent kept saying another host is connected")


def _look_once(path, timeout):
    c = Conn.connect(path)
    try:
        c.send(b"\xff")
        c.send_msg({"execute": "info", "id": "look"})
        greeting, resent, info = None, {}, None
        while info is None:
            m = c.read_msg(timeout)
            if greeting is None and (m is None or "another host" in json.dumps(m)):
                return None
            check(m is not None, "the agent hung up on a looking host")
            if m.get("event") == "greeting":
                greeting = m
            elif m.get("event") == "report":
                resent[m["data"]["seq"]] = m
            elif m.get("id") == "look":
                check("return" in m, f"info failed: {m}")
                info = m["return"]
        return HostView(greeting, resent, info)
    except (BrokenPipeError, ConnectionResetError):
        return None
    finally:
        c.close()


def sqlite(db, sql):
    """Rows from the sqlite3 shell, the independent reader of the store."""
    p = subprocess.run(["sqlite3", "-batch", "-noheader", "-separator", "|",
                        "-cmd", ".timeout 10000", db, sql],
                       capture_output=True, text=True, timeout=HANG_GUARD_S)
    check(p.returncode == 0, f"sqlite3 {sql!r}: {p.stderr.strip()}")
    return [line.split("|") for line in p.stdout.splitlines()]


def has_reports_table(db):
    """False before the collector's first start got as far as its schema."""
    return os.path.exists(db) and bool(
        sqlite(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'reports'"))


def stored_seqs(db, stream):
    """Every stored seq of a stream, with repeats (a duplicate shows twice)."""
    if not has_reports_table(db):
        return []
    return sorted(int(r[0]) for r in sqlite(db, f"SELECT seq FROM reports WHERE stream = '{stream}'"))


def duplicates(db):
    return sqlite(db, "SELECT vm, stream, seq, COUNT(*) FROM reports "
                      "GROUP BY vm, stream, seq HAVING COUNT(*) > 1")


def start_collector(collector, state, sockets, extra=(), user=None, metrics=""):
    argv = [collector, "run", "--state-dir", state, "--metrics-listen", metrics]
    for name, path in sockets:
        argv += ["--socket", f"{name}={path}"]
    return Proc(argv + list(extra), "collector", user=user)


def main(cases, argv):
    """Runs the named cases (all when none is named); prints ok/FAIL each."""
    names = argv or list(cases)
    failed, skipped = [], []
    for n in names:
        t0 = time.monotonic()
        try:
            cases[n]()
            print(f"ok   {n} ({time.monotonic() - t0:.1f} s)", flush=True)
        except Skip as e:
            print(f"SKIP: {n}: {e}", flush=True)
            skipped.append(n)
        except Failure as e:
            print(f"FAIL {n}: {e}", flush=True)
            failed.append(n)
        finally:
            for p in STARTED:
                p.kill()
            STARTED.clear()
    if failed:
        return 1
    return 77 if len(skipped) == len(names) else 0
