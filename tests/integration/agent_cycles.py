#!/usr/bin/env python3
"""1,000 disconnect/reconnect cycles of the real agent, no seq lost (issue 11,
item 8), black box.

The real `daxprobe agent --listen` daemon, driven by a scripted host. Each
cycle connects, checks that the agent resends exactly the reports that no
ack covered (acks are cumulative: every seq above the acknowledged one, none
below, each once), asks for new reports, acknowledges some, and hangs up at a
random point: before reading anything, in the middle of the resends, with
half a command line sent, right after an ack whose reply it never reads, or
after a `report` whose event it never reads. An ack that was sent but whose
reply was not read may or may not have been applied; the next cycle's resend
must be consistent with one of the two. The last cycle checks that the agent
dropped nothing and still answers.

usage: agent_cycles.py DAXPROBE [CYCLES]   (DAXPROBE_SEED replays a run)
"""
import os
import random
import shutil
import sys
import tempfile

import blackbox as bb
from blackbox import check

DAXPROBE = sys.argv[1]
CYCLES = int(sys.argv[2]) if len(sys.argv) > 2 else 1000


class Busy(Exception):
    """The agent had not yet noticed the previous host hang up."""


class Books:
    def __init__(self):
        self.acked = 0        # highest seq an ack was confirmed for
        self.maybe_acked = 0  # highest seq an ack was sent for (reply unread)
        self.last = 0         # highest seq the agent said it produced
        self.stream = None


def read_resends(conn, books, cycle):
    """The greeting, the resent reports, then info's return: checks the resend."""
    conn.send(b"\xff")
    conn.send_msg({"execute": "info", "id": f"info{cycle}"})
    seqs, info, greeting = [], None, None
    while info is None:
        m = conn.read_msg()
        if greeting is None and (m is None or "another host is connected" in str(m)):
            raise Busy()
        check(m is not None, f"cycle {cycle}: the agent hung up before answering info")
        if m.get("event") == "greeting":
            greeting = m
        elif m.get("event") == "report":
            seqs.append(m["data"]["seq"])
            check(m["data"]["stream"] == books.stream or books.stream is None, "stream changed")
        elif m.get("id") == f"info{cycle}":
            info = m["return"]
    check(greeting is not None, f"cycle {cycle}: no greeting")
    stream = greeting["data"]["agent"]["stream"]
    check(books.stream in (None, stream), f"cycle {cycle}: a new stream without a restart")
    books.stream = stream
    last = info["reports"]["last_seq"]
    check(last >= books.last, f"cycle {cycle}: last_seq went back from {books.last} to {last}")
    check(len(seqs) == len(set(seqs)), f"cycle {cycle}: a report resent twice: {seqs}")
    check(info["reports"]["dropped"] == 0, f"cycle {cycle}: reports dropped: {info['reports']}")
    # Cumulative acks: the resend is every seq above the acknowledged one.
    lo = seqs[0] - 1 if seqs else last
    check(seqs == list(range(lo + 1, last + 1)), f"cycle {cycle}: resent {seqs}, last {last}")
    check(books.acked <= lo <= max(books.acked, books.maybe_acked),
          f"cycle {cycle}: resend starts after {lo}, but acked {books.acked} "
          f"(maybe {books.maybe_acked}): {'lost' if lo > books.acked else 'forgot an ack'}")
    books.acked = books.maybe_acked = lo
    books.last = last
    return seqs


def connect_and_read(path, books, cycle):
    for _ in range(1000):  # a hang guard, not a tuning knob: a retry takes one agent wake
        conn = bb.Conn.connect(path)
        try:
            return conn, read_resends(conn, books, cycle)
        except (Busy, BrokenPipeError, ConnectionResetError):
            conn.close()
    raise bb.Failure(f"cycle {cycle}: the agent kept saying another host is connected")


def cycle_once(path, books, rng, cycle):
    cut = rng.randrange(6)
    if cut == 0:
        # Hang up at once, maybe before the agent even wrote its greeting.
        bb.Conn.connect(path).close()
        return
    conn, seqs = connect_and_read(path, books, cycle)
    try:
        # New reports now and then (each runs a check, which is the slow part).
        for i in range(rng.randrange(3)):
            conn.send_msg({"execute": "report", "id": f"r{cycle}.{i}"})
            if cut == 1 and i == 0:
                return  # the report's event and reply unread
            while True:
                m = conn.read_msg()
                check(m is not None, f"cycle {cycle}: hung up during a report")
                if m.get("event") == "report":
                    seqs.append(m["data"]["seq"])
                    books.last = max(books.last, m["data"]["seq"])
                elif m.get("id") == f"r{cycle}.{i}":
                    break
        if cut == 2:
            conn.send(b'{"execute":"ack","arguments":{"stream":"' + books.stream.encode())
            return  # half a command line: must not glue onto the next host's first
        if seqs and rng.random() < 0.7:
            upto = rng.choice(seqs)
            conn.send_msg({"execute": "ack", "arguments": {"stream": books.stream, "seq": upto},
                           "id": f"a{cycle}"})
            books.maybe_acked = max(books.maybe_acked, upto)
            if cut == 3:
                return  # the ack's reply unread: applied or not, either is fine
            while True:
                m = conn.read_msg()
                check(m is not None, f"cycle {cycle}: hung up during an ack")
                if m.get("id") == f"a{cycle}":
                    check("return" in m, f"cycle {cycle}: ack failed: {m}")
                    books.acked = max(books.acked, upto)
                    break
    finally:
        conn.close()


def main():
    seed = int(os.environ.get("DAXPROBE_SEED", str(random.SystemRandom().randrange(1 << 32))))
    print(f"agent-cycles: {CYCLES} cycles, DAXPROBE_SEED={seed}", flush=True)
    rng = random.Random(seed)
    tmp = tempfile.mkdtemp(prefix="dxcycles-")
    sock = os.path.join(tmp, "agent.sock")
    # No interval report during the run: every report is one the host asked for.
    agent = bb.start_agent(DAXPROBE, sock, interval=86400, extra=["--recheck", "0"])
    try:
        bb.wait_socket(sock, agent)
        books = Books()
        for cycle in range(CYCLES):
            cycle_once(sock, books, rng, cycle)
            check(agent.alive(), f"the agent exited at cycle {cycle}:\n{agent.log()}")
        final, _ = connect_and_read(sock, books, CYCLES)
        final.close()
        check(books.last >= CYCLES // 4, f"only {books.last} reports in {CYCLES} cycles")
        print(f"ok   agent-cycles: {CYCLES} cycles, {books.last} reports, none lost or repeated")
        return 0
    except bb.Failure as e:
        print(f"FAIL agent-cycles (DAXPROBE_SEED={seed}): {e}")
        return 1
    finally:
        agent.kill(15)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
