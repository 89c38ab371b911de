#!/usr/bin/env python3
"""console_lines.Console, the one primitive every console wait of the VM
test bed goes through: it never matches a line still arriving (issue 30:
`size=(\\d+)` matched `size=1` of `size=528482304` and a 1-byte fsdax
template was cached). No VM: the bytes are fed as the reader thread feeds
them, in every split."""

import sys
import threading

from harness.console_lines import Console


class Timeout(Exception):
    pass


FAILS = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        FAILS.append(what)


def matched(con, pattern):
    """wait_match without waiting: the match, or None."""
    try:
        return con.wait_match(pattern, 0)
    except Timeout:
        return None


# What the fsdax setup boot prints (debian_image.FSDAX_SETUP), between kernel lines.
SETUP = (b"[    4.1] nd_pmem namespace0.0: unable to guarantee persistence of writes\r\n"
         b"{\r\n  \"dev\":\"namespace0.0\",\r\n  \"mode\":\"fsdax\"\r\n}\r\n"
         b"@@FSDAX region=0x140000000 data=0x142200000 size=528482304\r\n"
         b"[    5.0] reboot: Power down\r\n")
PATTERN = rb"@@FSDAX region=(0x[0-9a-f]+) data=(0x[0-9a-f]+) size=(\d+)$"


def every_split():
    """Fed one byte at a time, a wait returns nothing or the whole number,
    never a prefix of it; a chunk cut inside CR LF changes nothing."""
    con = Console(Timeout)
    seen = set()
    for i in range(len(SETUP)):
        con.feed(SETUP[i:i + 1])
        if m := matched(con, PATTERN):
            seen.add(m.group(3))
    check(seen == {b"528482304"}, f"byte by byte: the size is only ever the whole number ({seen})")
    # The old primitive's failure: the line's start has arrived, not its end.
    con = Console(Timeout)
    cut = SETUP.index(b"size=5") + len(b"size=5")
    con.feed(SETUP[:cut])
    check(matched(con, rb"size=(\d+)") is None, "a line without its newline is never matched")
    con.feed(SETUP[cut:])
    m = matched(con, rb"size=(\d+)")
    check(m is not None and m.group(1) == b"528482304", "once the newline came, the whole number")


def counts():
    con = Console(Timeout)
    con.feed(b"agent: host conn")
    check(con.count(b"host connected") == 0, "count: not in a line still arriving")
    try:
        con.wait_count(b"host connected", 1, 0)
        check(False, "wait_count: not satisfied by a line still arriving")
    except Timeout:
        check(True, "wait_count: not satisfied by a line still arriving")
    con.feed(b"ected\nagent: host connected\n")
    check(con.count(b"host connected") == 2, "count: both complete lines")
    con.wait_count(b"host connected", 2, 0)
    check(True, "wait_count: two complete lines")


def feed_returns_completed_lines():
    """What the harness looks for its DONE marker in (harness.guest: Guest._read_console)."""
    con = Console(Timeout)
    a = con.feed(b"DAXPROBE-DO")
    b = con.feed(b"NE shipped=1234\nDAXPROBE-STEP x")
    check(a == b"" and b == b"DAXPROBE-DONE shipped=1234\n",
          f"feed returns the lines it completed ({a!r}, {b!r})")


def eof_piece_is_not_a_line():
    con = Console(Timeout)
    con.feed(b"first\n@@FSDAX region=0x1 data=0x2 size=1")
    con.close()
    try:
        con.wait_match(PATTERN, 5)
        check(False, "after EOF the cut-off piece is not a line")
    except Timeout as e:
        check("QEMU exited" in str(e), f"after EOF the cut-off piece is not a line ({e})")


def wakes_a_waiter():
    """A blocked wait is woken by the reader's feed (no polling)."""
    con = Console(Timeout)
    out = {}
    waiter = threading.Thread(target=lambda: out.setdefault("m", con.wait_match(
        rb"last=(\d+)$", 60)))
    waiter.start()
    con.feed(b"DAXPROBE-AWAY-REPORTS last=1")
    con.feed(b"7\r\n")
    waiter.join(60)
    m = out.get("m")
    check(m is not None and m.group(1) == b"17", "a waiting thread gets the whole line")


every_split()
counts()
feed_returns_completed_lines()
eof_piece_is_not_a_line()
wakes_a_waiter()
print(f"{len(FAILS)} failed")
sys.exit(1 if FAILS else 0)
