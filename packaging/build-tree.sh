#!/bin/sh
# Configures (once) and compiles the build tree the way the package build
# compiles, so that the suite's package build (tests/vm/guest_deb.py) is
# ccache hits instead of a second full compile.
#
#   packaging/build-tree.sh BUILDDIR [TARGET...]   (no target: everything)
#
# Used by the demo (README line 1, tests/vm/demo.py) and by .ci/run.
# Same flags as debian/rules: dpkg-buildflags with hardening=+all, buildtype
# plain, assertions on, a unity build (meson's 4 files per compile: the same
# headers and templates compiled a quarter as often, 0.60x the CPU of a
# compile per file; bench/README.md at 0db4c71). Without -g, like the suite's package build
# (guest_deb.py): -g changes no instruction the guests run, only the compile
# time, and the first command should not pay for debug info.
# The flags are read at setup only (meson keeps them), so they stay out of
# the environment of everything else.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=$1
shift

# ccache keyed on content, not on where the tree is: the package build
# compiles a copy under BUILDDIR/deb (packaging/build-debs.sh sets the same).
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$src}"
export CCACHE_NOHASHDIR=true
export CCACHE_IGNOREOPTIONS='-ffile-prefix-map=*'

if [ ! -d "$build/meson-private" ]; then
    (
        export DEB_BUILD_MAINT_OPTIONS=hardening=+all
        export DEB_CFLAGS_STRIP=-g DEB_CXXFLAGS_STRIP=-g
        flags=$(dpkg-buildflags --export=sh) ||
            { echo "build-tree: dpkg-buildflags failed (packaging/install-deps.sh installs dpkg-dev)" >&2; exit 1; }
        eval "$flags"
        meson setup "$build" "$src" --buildtype=plain -Db_ndebug=false --unity on
    )
else
    # A build dir from before a pull: meson compile names targets from the
    # last configuration, so regenerate it first when meson.build changed.
    ninja -C "$build" build.ninja >/dev/null
fi
# dh builds with LC_ALL=C.UTF-8 and ccache hashes the locale: the same here.
LC_ALL=C.UTF-8 meson compile -C "$build" "$@"
