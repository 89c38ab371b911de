#!/usr/bin/env python3
"""Every mutant of mutants.txt can still be planted: its text is in its
file. The mutation check itself runs in .ci/run only (minutes); a source
that moved on under a mutant (seen: store-dedup after the insert became
ON CONFLICT ... DO NOTHING) is caught here, in the suite, instead.

  plantable.py SOURCE_ROOT
"""

import sys
from pathlib import Path


def main():
    root = Path(sys.argv[1])
    missing, count = [], 0
    for line in (root / "tests/mutation/mutants.txt").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        ident, path, old = line.split("\t")[:3]
        count += 1
        if old.replace("@NL@", "\n") not in (root / path).read_text():
            missing.append(f"{ident} ({path})")
    for m in missing:
        print(f"FAIL: mutant {m}: its text is no longer in the file (update mutants.txt)")
    print(f"{count - len(missing)} of {count} mutants plantable")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
