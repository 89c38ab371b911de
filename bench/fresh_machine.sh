#!/bin/sh
# A fresh Debian 12 machine, as a chroot built from the archive with the
# host's apt sources (mmdebstrap), to time what a newcomer waits for:
#   apt   - packaging/install-deps.sh's packages: update, download, then the
#           install with dpkg's default fsyncs and with --force-unsafe-io
#           (each in its own fresh chroot);
#   line1 - README line 1 verbatim in a fresh chroot holding a clone of
#           this repository (nothing installed, empty ~/.cache).
# The load average is printed with each figure: on a shared machine compare
# the phases of one run, not runs. Needs root, mmdebstrap, network.
# usage: bench/fresh_machine.sh WORKDIR apt|line1
set -eu
work=$1
what=$2
src=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$work"
base=$work/bookworm-base.tar
[ -f "$base" ] || mmdebstrap --variant=apt --include=git,ca-certificates,time bookworm "$base" \
    /etc/apt/sources.list.d/*.sources >"$work/mmdebstrap.log" 2>&1

fresh() { # a new chroot at $1, /proc /sys /dev bound; unbound on exit
    rm -rf "$1" && mkdir -p "$1" && tar -C "$1" -xf "$base"
    cp /etc/apt/apt.conf.d/99* "$1/etc/apt/apt.conf.d/" 2>/dev/null || true
    for m in proc sys dev dev/pts; do mount --bind "/$m" "$1/$m"; done
    mounted="$mounted $1"
}
mounted=""
cleanup() { for r in $mounted; do for m in dev/pts dev sys proc; do umount "$r/$m" 2>/dev/null || true; done; done; }
trap cleanup EXIT
load() { cut -d' ' -f1-3 /proc/loadavg; }
in_chroot() { r=$1; shift; chroot "$r" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    DEBIAN_FRONTEND=noninteractive "$@"; }

case $what in
apt)
    pk=$(sed -n '/^packages="/,/^"/p' "$src/packaging/install-deps.sh" | grep -v '"' | tr '\n' ' ')
    for v in fsync unsafe-io; do
        r=$work/apt-$v
        fresh "$r"
        opt=""
        [ $v = unsafe-io ] && opt="-o Dpkg::Options::=--force-unsafe-io"
        in_chroot "$r" sh -c "
            /usr/bin/time -f '$v update %e s' apt-get update -qq
            /usr/bin/time -f '$v download %e s' apt-get install -y -qq --no-install-recommends --download-only $pk >/dev/null
            /usr/bin/time -f '$v install %e s' apt-get install -y -qq --no-install-recommends $opt $pk >/dev/null
            echo \"$v packages \$(dpkg -l | grep -c '^ii')\"" 2>&1 | grep -E "^$v "
        echo "$v load $(load)"
    done ;;
line1)
    r=$work/line1
    fresh "$r"
    git clone -q "$src" "$r/root/daxprobe"
    line=$(grep -m1 '^packaging/install-deps.sh' "$src/README.md" | sed 's/ *#.*//')
    echo "line 1: $line (load $(load))"
    in_chroot "$r" sh -c "cd /root/daxprobe && /usr/bin/time -f 'line1 %e s' sh -c '$line'" >"$work/line1.log" 2>&1 ||
        { tail -30 "$work/line1.log"; exit 1; }
    grep '^line1 ' "$work/line1.log"
    echo "line1 load $(load)" ;;
*) echo "usage: $0 WORKDIR apt|line1" >&2; exit 2 ;;
esac
