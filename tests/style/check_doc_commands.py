#!/usr/bin/env python3
"""Every script the docs tell a reader to run as a command (a code line or
a backticked command that starts with its path, not `python3 PATH`) is
executable in git (mode 755): a fresh clone has no other modes.

  check_doc_commands.py SOURCE_ROOT
"""

import os
import re
import subprocess
import sys

DOCS = ["README.md", "bench/README.md", "tests/vm/README.md", "docs/architecture.md"]
# A command's first word: a path into the tree, after optional wrappers and
# variables (PYTHONPATH=tests/vm bench/...).
COMMAND = re.compile(r"^(?:(?:[A-Z_]+=\S+|nice -n \d+|time|sudo|env [A-Z_]+=\S+)\s+)*"
                     r"((?:\.ci|bench|tests|packaging)/[\w./-]+)(?:\s|$)")


def commands(text):
    """(path, line number) of every command the text names."""
    found, fenced = [], False
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        candidates = [line.strip()] if fenced else []
        candidates += re.findall(r"`([^`]+)`", line)
        for c in candidates:
            m = COMMAND.match(c)
            # A path followed by nothing, inside prose, names a file, not a command.
            if m and (fenced or c.strip() != m.group(1)):
                found.append((m.group(1), n))
    return found


def main():
    root = sys.argv[1]
    modes = {}
    for line in subprocess.run(["git", "-C", root, "ls-files", "-s"], capture_output=True,
                               text=True, check=True).stdout.splitlines():
        meta, path = line.split("\t", 1)
        modes[path] = meta.split()[0]
    bad, seen = [], 0
    for doc in DOCS:
        with open(os.path.join(root, doc)) as f:
            for path, n in commands(f.read()):
                if path not in modes:
                    continue  # a build output or an example path, not a tracked script
                seen += 1
                if modes[path] != "100755":
                    bad.append(f"{doc}:{n}: {path} is run as a command but has mode {modes[path]}")
    for b in bad:
        print(f"FAIL: {b}")
    print(f"{seen} documented commands, {len(bad)} not executable")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
