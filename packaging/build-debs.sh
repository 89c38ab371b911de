#!/bin/sh
# Builds the Debian packages daxprobe (guest) and daxprobe-collector (host)
# with `dpkg-buildpackage -us -uc -b` and checks them with lintian.
#
#   packaging/build-debs.sh [--no-lintian] [OUTDIR]   (default: build/deb)
#
# --no-lintian: only build (the VM suite's `debs` target; CI runs lintian on
# what that target built).
# dpkg-buildpackage writes its results next to the source tree, so it runs
# on a copy in OUTDIR/daxprobe (the tracked files, uncommitted changes
# included): nothing is written outside OUTDIR.
#
# ccache: packaging/build-tree.sh compiles the build tree with the same
# dpkg-buildflags and sets the same three CCACHE_ variables (BASEDIR this
# tree, NOHASHDIR, -ffile-prefix-map left out of the hash), so this second
# compile of the same sources is cache hits; the suite's package build
# (tests/vm/guest_deb.py) drops -g as build-tree.sh does.
set -eu
lintian=yes
if [ "${1:-}" = --no-lintian ]; then
    lintian=no
    shift
fi
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$src/build/deb}
case $out in /*) ;; *) out=$PWD/$out ;; esac

rm -rf "$out"
mkdir -p "$out/daxprobe"
(cd "$src" && git ls-files -z --cached --others --exclude-standard |
    tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -xf - -C "$out/daxprobe"

export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$src}"
export CCACHE_NOHASHDIR=true
export CCACHE_IGNOREOPTIONS='-ffile-prefix-map=*'
export CCACHE_DIR="${CCACHE_DIR:-$(ccache -k cache_dir 2>/dev/null || echo "$HOME/.cache/ccache")}"
start=$(date +%s)
(cd "$out/daxprobe" && dpkg-buildpackage -us -uc -b) >"$out/dpkg-buildpackage.log" 2>&1 || {
    tail -n 60 "$out/dpkg-buildpackage.log"
    echo "build-debs: dpkg-buildpackage failed (log: $out/dpkg-buildpackage.log)" >&2
    exit 1
}
echo "build-debs: dpkg-buildpackage took $(($(date +%s) - start)) s"
ls "$out"/*.deb

[ "$lintian" = yes ] || exit 0
# Errors and warnings fail; the overrides in debian/*.lintian-overrides say why.
lintian --fail-on error,warning --info "$out"/*.changes
echo "build-debs: lintian clean"
