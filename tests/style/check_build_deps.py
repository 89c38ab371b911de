#!/usr/bin/env python3
"""Every package debian/control's Build-Depends names is one that
packaging/install-deps.sh installs: the suite builds the .debs
(tests/vm/guest_deb.py), and on a new machine without one of them
dpkg-checkbuilddeps stops the whole VM suite (seen: systemd, absent from
a fresh chroot, present on this project's machines).

  check_build_deps.py SOURCE_ROOT
"""

import re
import sys


def build_depends(control):
    """Package names of the source stanza's Build-Depends (versions,
    architectures and alternatives beyond the first dropped)."""
    m = re.search(r"^Build-Depends:(.*?)(?=^\S)", control, re.M | re.S)
    names = []
    for dep in m.group(1).split(","):
        first = dep.split("|")[0].strip()
        if first:
            names.append(re.split(r"[\s(\[]", first)[0])
    return names


def installed(script):
    """The words of install-deps.sh's packages="..." list."""
    m = re.search(r'^packages="(.*?)"', script, re.M | re.S)
    return set(m.group(1).split())


def main():
    root = sys.argv[1]
    deps = build_depends(open(f"{root}/debian/control").read())
    have = installed(open(f"{root}/packaging/install-deps.sh").read())
    # debhelper-compat is a virtual package that debhelper provides.
    missing = [d for d in deps if d not in have and not (d == "debhelper-compat" and "debhelper" in have)]
    if missing:
        print(f"FAIL: debian/control builds with {', '.join(missing)}, "
              "which packaging/install-deps.sh does not install")
        return 1
    print(f"OK: install-deps.sh installs all {len(deps)} build dependencies")
    return 0


if __name__ == "__main__":
    sys.exit(main())
