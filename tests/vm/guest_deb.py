#!/usr/bin/env python3
"""Build the Debian packages for the VM suite (meson target `debs`).

The guest images are made from the guest package (daxprobe_*.deb), so the
package is what the VM scenarios test. This runs packaging/build-debs.sh
--no-lintian (dpkg-buildpackage on a copy of the tree, into OUTDIR), then
writes a stamp (the packages and their sha256) and a depfile: every tracked
file under debian/ and packaging/ and every meson.build. The target also
depends on the built programs, so a source change rebuilds it; nothing else
does (not every `meson test`).

Built without -g (DEB_CFLAGS_STRIP/DEB_CXXFLAGS_STRIP, unless the caller set
them), as packaging/build-tree.sh compiles the build tree (README line 1,
.ci/run): with the same flags this second compile of the same sources is
ccache hits. -g changes no instruction of the stripped programs the guests
run; a release build (packaging/build-debs.sh alone) keeps it.

DEB_BUILD_OPTIONS gets `nocheck` (the suite runs the unit tests itself; the
package build would run them a second time), `noautodbgsym` (no -g, no debug
symbols) and `parallel=<cores>` unless the caller set them. CI then runs
lintian on OUTDIR/*.changes and installs the host package from there
(.ci/run): one package build per CI run.

  guest_deb.py --source SRC --out BUILD/deb --stamp debs.stamp --depfile debs.d
"""

import argparse
import glob
import hashlib
import os
import subprocess
import sys
import time


def tracked_inputs(src):
    """The files whose change changes the packages besides the programs."""
    p = subprocess.run(["git", "-C", src, "ls-files", "-z", "--", "debian", "packaging",
                        "meson.build", "meson_options.txt", ":(glob)**/meson.build"],
                       capture_output=True, check=True)
    return sorted({os.path.join(src, f) for f in p.stdout.decode().split("\0") if f})


def build_options():
    opts = os.environ.get("DEB_BUILD_OPTIONS", "").split()
    # Without -g there is nothing for a -dbgsym package (lintian:
    # debug-file-with-no-debug-symbols).
    for o in ("nocheck", "noautodbgsym"):
        if o not in opts:
            opts.append(o)
    if not any(o.startswith("parallel=") for o in opts):
        opts.append(f"parallel={os.cpu_count() or 1}")
    return " ".join(opts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--out", required=True, help="where the .deb/.changes go")
    ap.add_argument("--stamp", required=True)
    ap.add_argument("--depfile", required=True)
    args = ap.parse_args()

    src = os.path.abspath(args.source)
    env = dict(os.environ, DEB_BUILD_OPTIONS=build_options())
    for var in ("DEB_CFLAGS_STRIP", "DEB_CXXFLAGS_STRIP"):
        env.setdefault(var, "-g")
    t0 = time.monotonic()
    p = subprocess.run([os.path.join(src, "packaging", "build-debs.sh"), "--no-lintian",
                        os.path.abspath(args.out)], env=env)
    if p.returncode != 0:
        print(f"guest_deb: packaging/build-debs.sh failed (exit {p.returncode}); "
              f"the VM guests are built from the guest package", file=sys.stderr)
        return 1
    debs = sorted(glob.glob(os.path.join(args.out, "*.deb")))
    guest = [d for d in debs if os.path.basename(d).startswith("daxprobe_")]
    if len(guest) != 1:
        print(f"guest_deb: want one guest package daxprobe_*.deb in {args.out}, "
              f"found {[os.path.basename(d) for d in debs]}", file=sys.stderr)
        return 1
    with open(args.stamp + ".tmp", "w") as f:
        for d in debs:
            digest = hashlib.sha256(open(d, "rb").read()).hexdigest()
            f.write(f"{digest}  {os.path.basename(d)}\n")
    os.replace(args.stamp + ".tmp", args.stamp)
    with open(args.depfile, "w") as f:
        deps = " ".join(d.replace(" ", "\\ ") for d in tracked_inputs(src))
        f.write(f"{args.stamp}: {deps}\n")
    print(f"guest_deb: {len(debs)} packages in {args.out} "
          f"({time.monotonic() - t0:.0f} s, DEB_BUILD_OPTIONS='{env['DEB_BUILD_OPTIONS']}')")
    return 0


if __name__ == "__main__":
    sys.exit(main())
