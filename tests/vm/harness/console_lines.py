"""A guest's console (or any byte stream a reader thread feeds), waited on in
whole lines only.

The console arrives in pieces. A regex run over what has arrived so far can
match the start of a line whose rest is still on its way: `size=(\\d+)`
matched `size=1` of a number still arriving, and a 1-byte fsdax template got
cached (issue 30). So every wait here looks only at complete lines (up to a
newline; a trailing CR dropped), one line at a time, and a piece with no
newline yet is never looked at, not even once the stream ended (a line cut
off by QEMU's exit is not a line).
"""

import re
import threading
import time


class Console:
    """The bytes so far, a condition the reader notifies, and waits on
    complete lines. `error` is the exception a wait raises on timeout or
    end of stream (the harness's GuestError)."""

    def __init__(self, error):
        self.error = error
        self.cond = threading.Condition()
        self.data = bytearray()
        self.complete = 0  # length of the complete lines: just past the last newline
        self.eof = False

    def feed(self, chunk):
        """Appends a chunk (the reader thread); returns the lines it
        completed, as one bytes object (empty when it completed none)."""
        with self.cond:
            start = self.complete
            self.data += chunk
            nl = self.data.rfind(b"\n", start)
            if nl >= 0:
                self.complete = nl + 1
            self.cond.notify_all()
            return bytes(self.data[start:self.complete])

    def close(self):
        with self.cond:
            self.eof = True
            self.cond.notify_all()

    def text(self):
        """Everything so far, the unfinished last piece included (for logs)."""
        with self.cond:
            return self.data.decode(errors="replace")

    def count(self, needle):
        """How often `needle` (bytes, no newline) occurs in complete lines."""
        with self.cond:
            return self.data.count(needle, 0, self.complete)

    def _lines(self, pos):
        """Complete lines from offset `pos` on: [(line, offset after it)]."""
        out = []
        while pos < self.complete:
            nl = self.data.index(b"\n", pos)
            line = bytes(self.data[pos:nl])
            out.append((line[:-1] if line.endswith(b"\r") else line, nl + 1))
            pos = nl + 1
        return out

    def _wait(self, found, what, timeout):
        """Until found() (called with the lock held) returns something."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while (r := found()) is None:
                left = deadline - time.monotonic()
                if self.eof or left <= 0:
                    raise self.error(f"console: {what} not seen "
                                     f"({'QEMU exited' if self.eof else f'{timeout} s'})")
                self.cond.wait(left)
            return r

    def wait_match(self, pattern, timeout):
        """The match of the regex `pattern` (bytes) in the first complete line
        it matches (the line without its newline is the match's string)."""
        rx = re.compile(pattern)
        pos = 0

        def found():
            nonlocal pos
            for line, after in self._lines(pos):
                pos = after
                if m := rx.search(line):
                    return m
            return None
        return self._wait(found, repr(pattern), timeout)

    def wait_count(self, needle, count, timeout):
        """Until `needle` (bytes) occurred `count` times in complete lines."""
        return self._wait(lambda: True if self.data.count(needle, 0, self.complete) >= count
                          else None, f"{needle.decode()!r} x{count}", timeout)
