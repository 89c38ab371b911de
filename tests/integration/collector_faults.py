#!/usr/bin/env python3
"""The real collector under faults, black box (issue 11, item 8).

Real `daxprobe agent --listen` processes (or scripted guests, for the hostile
ones) stream to the real `daxprobe-collector run`; the store is read with the
`sqlite3` shell and the agents' queues by connecting to them as a host that
acknowledges nothing. Nothing here links the collector's code, so the cases
hold for any event loop behind the same command line and protocol.

usage: collector_faults.py DAXPROBE COLLECTOR [CASE...]
cases: sigkill, corrupt-db, read-only, stops-reading, oversize
DAXPROBE_KILLS (default 20) sets the number of SIGKILLs; the seed is printed
and DAXPROBE_SEED replays it.
"""
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import blackbox as bb
from blackbox import Failure, check

DAXPROBE, COLLECTOR = sys.argv[1], sys.argv[2]
MAX_LINE = 1 << 20  # PROTOCOL.md: agent-to-host message limit, newline excluded


def total_rows(db):
    if not bb.has_reports_table(db):
        return 0
    return int(bb.sqlite(db, "SELECT COUNT(*) FROM reports")[0][0])


def acked_upto(view):
    """Acks are cumulative: the agent holds every seq above the acknowledged one."""
    return view.info["reports"]["last_seq"] - len(view.resent)


def agent_books(view, db):
    """An agent's view against the store: what was acknowledged (every seq
    not resent, acks being cumulative) must be stored exactly once."""
    last = view.info["reports"]["last_seq"]
    pending = sorted(view.resent)
    check(view.info["reports"]["dropped"] == 0, f"agent dropped reports: {view.info}")
    check(len(pending) == view.info["reports"]["pending"],
          f"resent {pending} but info says {view.info['reports']['pending']} pending")
    check(pending == list(range(last - len(pending) + 1, last + 1)),
          f"unacknowledged reports are not the newest ones: {pending}, last {last}")
    acked = set(range(1, last - len(pending) + 1))
    stored = bb.stored_seqs(db, view.stream)
    check(len(stored) == len(set(stored)), f"duplicates stored: {stored}")
    missing = sorted(acked - set(stored))
    check(not missing, f"acknowledged but not in the store: {missing}")
    check(set(stored) <= set(range(1, last + 1)), f"stored seqs the agent never sent: {stored}")
    return len(acked), stored


def streaming_agents(tmp, n):
    agents, socks = [], []
    for i in range(n):
        sock = os.path.join(tmp, f"agent{i}.sock")
        agents.append(bb.start_agent(DAXPROBE, sock))
        socks.append((f"vm{i}", sock))
    for a, (_, sock) in zip(agents, socks):
        bb.wait_socket(sock, a)
    return agents, socks


def case_sigkill():
    kills = int(os.environ.get("DAXPROBE_KILLS", "20"))
    seed = int(os.environ.get("DAXPROBE_SEED", str(random.SystemRandom().randrange(1 << 32))))
    print(f"sigkill: {kills} kills, DAXPROBE_SEED={seed}", flush=True)
    rng = random.Random(seed)
    tmp = tempfile.mkdtemp(prefix="dxfault-kill-")
    state = os.path.join(tmp, "state")
    os.mkdir(state)
    db = os.path.join(state, "collector.db")
    agents, socks = streaming_agents(tmp, 3)
    try:
        acked_before, progressed = 0, 0
        for k in range(kills):
            before = total_rows(db)
            c = bb.start_collector(COLLECTOR, state, socks)
            if rng.random() < 0.5:
                # Anywhere from start-up on: opening, migrating, connecting.
                time.sleep(rng.uniform(0, 0.4))  # picks the kill point; not a wait for anything
            else:
                # In the middle of streaming: after a store, plus a random bit.
                bb.wait_until(lambda: total_rows(db) > before, "a report stored")
                time.sleep(rng.uniform(0, 0.3))  # picks the kill point
            c.kill(9)
            views = [bb.look_at_agent(sock) for _, sock in socks]
            acked = sum(agent_books(v, db)[0] for v in views)
            progressed += acked > acked_before
            acked_before = acked
        check(progressed >= kills // 4, f"acks progressed in only {progressed} of {kills} runs")
        # Then one run that is not killed: everything the agents hold arrives.
        c = bb.start_collector(COLLECTOR, state, socks)
        goal = {v.stream: v.info["reports"]["last_seq"] for v in views}
        # ... up to one report newer than the agents had, so this run did the work.
        bb.wait_until(lambda: all(set(range(1, last + 2)) <= set(bb.stored_seqs(db, s))
                                  for s, last in goal.items()), "every report stored after the kills")
        c.kill(15)
        check(c.wait_exit() == 0, f"collector exit after SIGTERM:\n{c.log()}")
        for _, sock in socks:
            agent_books(bb.look_at_agent(sock), db)
        check(not bb.duplicates(db), f"duplicates: {bb.duplicates(db)}")
        print(f"sigkill: {acked} reports acknowledged across {kills} kills, all stored once")
    finally:
        for a in agents:
            a.kill()
        shutil.rmtree(tmp, ignore_errors=True)


def case_corrupt_db():
    tmp = tempfile.mkdtemp(prefix="dxfault-corrupt-")
    state = os.path.join(tmp, "state")
    os.mkdir(state)
    db = os.path.join(state, "collector.db")
    agents, socks = streaming_agents(tmp, 1)
    try:
        # A store with reports in it, then a page in its middle overwritten.
        c = bb.start_collector(COLLECTOR, state, socks)
        bb.wait_until(lambda: total_rows(db) >= 2, "2 reports stored")
        c.kill(15)
        check(c.wait_exit() == 0, f"collector exit after SIGTERM:\n{c.log()}")
        for variant in ("garbage", "page"):
            if variant == "garbage":
                with open(db, "wb") as f:
                    f.write(b"this is not an SQLite database\n" * 512)
            else:
                # The reports table's root page garbled: every insert reads it.
                good = os.path.join(tmp, "good.db")
                page = int(bb.sqlite(good, "PRAGMA page_size")[0][0])
                root = int(bb.sqlite(good, "SELECT rootpage FROM sqlite_master WHERE name = 'reports'")[0][0])
                shutil.copy(good, db)
                with open(db, "r+b") as f:
                    f.seek((root - 1) * page)
                    f.write(bytes([0xA5]) * page)
            for suffix in ("-wal", "-shm"):
                if os.path.exists(db + suffix):
                    os.remove(db + suffix)
            view0 = bb.look_at_agent(socks[0][1])
            c = bb.start_collector(COLLECTOR, state, socks)
            # It must either refuse to run, or run without acknowledging
            # what it cannot store; it must say why, and it must not hang.
            line = c.wait_log(lambda l: any(w in l for w in ("malformed", "not a database", "corrupt")),
                              "an error saying the database is damaged")
            if variant == "garbage":  # at start-up: which file is it?
                check(db in line, f"{variant}: the error does not name the file: {line!r}")
            if c.alive():
                c.kill(15)
            rc = c.wait_exit()
            view = bb.look_at_agent(socks[0][1])
            first_unacked = acked_upto(view0) + 1
            check(acked_upto(view) == acked_upto(view0),
                  f"{variant}: the collector acknowledged reports into a damaged store (rc {rc})")
            if variant == "garbage":
                # Keep a good copy for the page variant: rebuilt by a fresh run.
                os.remove(db)
                c = bb.start_collector(COLLECTOR, state, socks)
                bb.wait_until(lambda: os.path.exists(db) and
                              set(range(first_unacked, max(first_unacked, view.info["reports"]["last_seq"]) + 1))
                              <= set(bb.stored_seqs(db, view.stream)), "reports stored in a new store")
                c.kill(15)
                check(c.wait_exit() == 0, f"collector exit after SIGTERM:\n{c.log()}")
                bb.sqlite(db, "PRAGMA wal_checkpoint(TRUNCATE)")
                shutil.copy(db, os.path.join(tmp, "good.db"))
        # The operator moves the damaged file away: nothing the agent held is lost.
        os.rename(db, db + ".damaged")
        c = bb.start_collector(COLLECTOR, state, socks)
        last = view.info["reports"]["last_seq"]
        # At least one report of this run (the agent makes one a second).
        bb.wait_until(lambda: os.path.exists(db) and set(range(first_unacked, max(first_unacked, last) + 1))
                      <= set(bb.stored_seqs(db, view.stream)),
                      "the held reports stored once the damaged file is gone")
        c.kill(15)
        check(c.wait_exit() == 0, f"collector exit after SIGTERM:\n{c.log()}")
        # The new store begins where the damaged one stopped acknowledging.
        end = bb.look_at_agent(socks[0][1])
        stored = bb.stored_seqs(db, end.stream)
        check(len(stored) == len(set(stored)), f"duplicates stored: {stored}")
        missing = set(range(first_unacked, acked_upto(end) + 1)) - set(stored)
        check(not missing, f"acknowledged but not in the new store: {sorted(missing)}")
    finally:
        for a in agents:
            a.kill()
        shutil.rmtree(tmp, ignore_errors=True)


def case_read_only():
    if os.geteuid() != 0:
        bb.skip("needs root to mount a read-only tmpfs as the state directory")
    tmp = tempfile.mkdtemp(prefix="dxfault-ro-")
    state = os.path.join(tmp, "state")
    os.mkdir(state)
    db = os.path.join(state, "collector.db")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", state],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        bb.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    agents = []
    try:
        agents, socks = streaming_agents(tmp, 1)
        c = bb.start_collector(COLLECTOR, state, socks)
        bb.wait_until(lambda: total_rows(db) >= 1, "a report stored")
        c.kill(15)
        check(c.wait_exit() == 0, f"collector exit after SIGTERM:\n{c.log()}")
        # The state filesystem goes read-only while the collector is down
        # (remounting under a running writer fails with EBUSY).
        subprocess.run(["mount", "-o", "remount,ro", state], check=True)
        view0 = bb.look_at_agent(socks[0][1])
        c = bb.start_collector(COLLECTOR, state, socks)
        rc = c.wait_exit()
        check(rc != 0, f"the collector ran on a read-only state directory:\n{c.log()}")
        check("Read-only file system" in c.log() and state in c.log(),
              f"the error does not name the directory and the cause:\n{c.log()}")
        view = bb.look_at_agent(socks[0][1])
        check(acked_upto(view) == acked_upto(view0), "reports were acknowledged while the store was read-only")
        subprocess.run(["mount", "-o", "remount,rw", state], check=True)
        c = bb.start_collector(COLLECTOR, state, socks)
        last = view.info["reports"]["last_seq"]
        # ... and one report newer than those, so this run surely did the work.
        bb.wait_until(lambda: set(range(1, last + 2)) <= set(bb.stored_seqs(db, view.stream)),
                      "the held reports stored once the directory is writable")
        c.kill(15)
        check(c.wait_exit() == 0, f"collector exit after SIGTERM:\n{c.log()}")
        agent_books(bb.look_at_agent(socks[0][1]), db)
    finally:
        for a in agents:
            a.kill()
        subprocess.run(["umount", "-l", state])
        shutil.rmtree(tmp, ignore_errors=True)


class ScriptedGuest:
    """A QEMU chardev socket (server=on) with a scripted agent behind it."""

    def __init__(self, path, stream):
        self.stream = stream
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(path)
        self.server.listen(4)
        self.conn = None

    def accept(self):
        self.server.settimeout(bb.HANG_GUARD_S)
        try:
            s, _ = self.server.accept()
        except socket.timeout:
            raise Failure("hang guard: the collector never connected to the scripted guest")
        self.conn = bb.Conn(s)

    def greeting(self):
        return {"event": "greeting", "data": {"protocol": 1, "agent": {
            "name": "daxprobe", "version": "scripted", "machine_id": "0" * 32, "hostname": "scripted",
            "stream": self.stream}, "capabilities": {}}, "timestamp": {"seconds": 1, "microseconds": 0}}

    def report(self, seq, pad=0):
        return {"event": "report", "data": {"stream": self.stream, "seq": seq, "reason": "interval",
                "dropped_reports": 0, "report": {"schema": "daxprobe.check/1", "pad": "x" * pad,
                                                 "verdict": {"code": "ok", "summary": "scripted"}},
                "metrics": {}}, "timestamp": {"seconds": 1, "microseconds": 0}}

    def report_line(self, seq, size):
        """A report event exactly `size` bytes long, newline excluded."""
        base = len(bb.json.dumps(self.report(seq), separators=(",", ":")))
        line = bb.json.dumps(self.report(seq, size - base), separators=(",", ":"))
        assert len(line) == size
        return line.encode() + b"\n"

    def close(self):
        if self.conn:
            self.conn.close()
        self.server.close()


def case_stops_reading():
    """A guest that never reads: the collector's acks to it pile up; it must
    be cut off, and a good agent beside it keeps being stored."""
    tmp = tempfile.mkdtemp(prefix="dxfault-deaf-")
    state = os.path.join(tmp, "state")
    os.mkdir(state)
    db = os.path.join(state, "collector.db")
    agents, socks = streaming_agents(tmp, 1)
    deaf = ScriptedGuest(os.path.join(tmp, "deaf.sock"), "d" * 64)  # long stream ids, long acks
    c = None
    try:
        c = bb.start_collector(COLLECTOR, state, socks + [("deaf", os.path.join(tmp, "deaf.sock"))])
        deaf.accept()
        deaf.conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        deaf.conn.send(b"\xff")
        deaf.conn.send_msg(deaf.greeting())
        seq, cut = 0, False
        deadline = time.monotonic() + 3 * bb.HANG_GUARD_S
        while not cut:
            check(time.monotonic() < deadline, "hang guard: the collector never cut off a guest that does not read")
            seq += 1
            try:
                deaf.conn.sock.settimeout(bb.HANG_GUARD_S)
                deaf.conn.send_msg(deaf.report(seq))
            except (BrokenPipeError, ConnectionResetError):
                cut = True
            except socket.timeout:
                raise Failure("hang guard: the collector stopped reading the guest without cutting it off")
        check(c.alive(), f"the collector died:\n{c.log()}")
        deaf_stored = bb.stored_seqs(db, deaf.stream)
        check(len(deaf_stored) == len(set(deaf_stored)), "duplicates stored for the deaf guest")
        # The good agent is still served: two more of its reports get stored.
        vm0 = bb.sqlite(db, "SELECT stream FROM reports WHERE vm = 'vm0' ORDER BY id DESC LIMIT 1")
        check(vm0, "the good agent had nothing stored while the deaf guest was connected")
        n0 = len(bb.stored_seqs(db, vm0[0][0]))
        bb.wait_until(lambda: len(bb.stored_seqs(db, vm0[0][0])) >= n0 + 2, "the good agent stored after the cut")
        c.kill(15)
        check(c.wait_exit() == 0, f"collector exit after SIGTERM:\n{c.log()}")
        print(f"stops-reading: cut off after {seq} reports sent, {len(deaf_stored)} stored")
    finally:
        if c and c.alive():
            c.kill()
        deaf.close()
        for a in agents:
            a.kill()
        shutil.rmtree(tmp, ignore_errors=True)


def case_oversize():
    """A report of exactly the limit is stored; one byte more is a
    violation: the guest is hung up on and nothing of it is stored."""
    tmp = tempfile.mkdtemp(prefix="dxfault-big-")
    state = os.path.join(tmp, "state")
    os.mkdir(state)
    db = os.path.join(state, "collector.db")
    agents, socks = streaming_agents(tmp, 1)
    big = ScriptedGuest(os.path.join(tmp, "big.sock"), "b1")
    c = None
    try:
        c = bb.start_collector(COLLECTOR, state, socks + [("big", os.path.join(tmp, "big.sock"))])
        big.accept()
        big.conn.send(b"\xff")
        big.conn.send_msg(big.greeting())
        big.conn.send_msg(big.report(1))
        big.conn.send(big.report_line(2, MAX_LINE))
        acked = 0
        while acked < 2:
            m = big.conn.read_msg()
            check(m is not None, f"hung up on a guest within the limit:\n{c.log()}")
            if m.get("execute") == "ack":
                acked = m["arguments"]["seq"]
            elif m.get("execute") == "sync":
                big.conn.send_msg({"return": m["arguments"]["id"], "id": m.get("id")})
        big.conn.send(big.report_line(3, MAX_LINE + 1))
        try:
            big.conn.send_msg(big.report(4))
        except (BrokenPipeError, ConnectionResetError):
            pass
        # Read what it still says (an ack of 3 or 4 would be a failure) until it hangs up.
        while True:
            m = big.conn.read_msg()
            if m is None:
                break
            check(not (m.get("execute") == "ack" and m["arguments"]["seq"] >= 3),
                  f"acknowledged past an over-long report: {m}")
        check(bb.stored_seqs(db, "b1") == [1, 2], f"stored: {bb.stored_seqs(db, 'b1')}")
        size = int(bb.sqlite(db, "SELECT length(report) FROM reports WHERE stream = 'b1' AND seq = 2")[0][0])
        check(size > MAX_LINE - 300, f"the report of the limit's size was cut: {size} bytes")
        vm0 = bb.sqlite(db, "SELECT stream FROM reports WHERE vm = 'vm0' ORDER BY id DESC LIMIT 1")
        check(vm0, "the good agent had nothing stored")
        n0 = len(bb.stored_seqs(db, vm0[0][0]))
        bb.wait_until(lambda: len(bb.stored_seqs(db, vm0[0][0])) >= n0 + 1, "the good agent stored after the cut")
        check(c.alive(), f"the collector died:\n{c.log()}")
        c.kill(15)
        check(c.wait_exit() == 0, f"collector exit after SIGTERM:\n{c.log()}")
    finally:
        if c and c.alive():
            c.kill()
        big.close()
        for a in agents:
            a.kill()
        shutil.rmtree(tmp, ignore_errors=True)


CASES = {"sigkill": case_sigkill, "corrupt-db": case_corrupt_db, "read-only": case_read_only,
         "stops-reading": case_stops_reading, "oversize": case_oversize}

if __name__ == "__main__":
    sys.exit(bb.main(CASES, sys.argv[3:]))
