#!/bin/sh
# A fresh Debian 12 machine, as a chroot built from the archive with the
# host's apt sources (mmdebstrap), to time what a newcomer waits for:
#   apt   - packaging/install-deps.sh's packages: update, download, then the
#           install with dpkg's default fsyncs and with --force-unsafe-io
#           (each in its own fresh chroot);
#   line1 - README line 1 verbatim in a fresh chroot holding a clone of
#           this repository (nothing installed, empty ~/.cache);
#   line2 - README line 2 verbatim in the chroot line1 left (WORKDIR/line1),
#           its seconds and the test counts (OK/FAIL/SKIP, from Meson's log);
#   both  - line1, then line2 in the same chroot: a new machine's two lines.
# The load average is printed with each figure: on a shared machine compare
# the phases of one run, not runs. Needs root, mmdebstrap, network.
# usage: bench/fresh_machine.sh WORKDIR apt|line1|line2|both
set -eu
work=$1
what=$2
src=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$work"
base=$work/bookworm-base.tar
[ -f "$base" ] || mmdebstrap --variant=apt --include=git,ca-certificates,time bookworm "$base" \
    /etc/apt/sources.list.d/*.sources >"$work/mmdebstrap.log" 2>&1

bind() { # the chroot at $1 a mount of its own (as a machine's / is: unshare
    # --mount and udevadm test change its propagation), with the host's
    # /proc /sys /dev; unbound on exit
    mount --bind "$1" "$1"
    for m in proc sys dev dev/pts; do mount --bind "/$m" "$1/$m"; done
    mounted="$mounted $1"
}
fresh() { # a new chroot at $1
    rm -rf "$1" && mkdir -p "$1" && tar -C "$1" -xf "$base"
    cp /etc/apt/apt.conf.d/99* "$1/etc/apt/apt.conf.d/" 2>/dev/null || true
    bind "$1"
}
mounted=""
cleanup() { for r in $mounted; do for m in dev/pts dev sys proc ""; do umount "$r/$m" 2>/dev/null || true; done; done; }
trap cleanup EXIT
load() { cut -d' ' -f1-3 /proc/loadavg; }
in_chroot() { r=$1; shift; chroot "$r" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    DEBIAN_FRONTEND=noninteractive "$@"; }

# README line $2 (its first command line starting with $3), verbatim, in
# the clone in chroot $1, timed; its log in WORKDIR/lineN.log; a line that
# passed goes to bench/results/fresh-machine-lineN.json against its budget $4.
run_line() {
    r=$1 n=$2
    line=$(grep -m1 "$3" "$src/README.md" | sed 's/ *#.*//')
    echo "line $n: $line (load $(load))"
    rc=0
    in_chroot "$r" sh -c "cd /root/daxprobe && /usr/bin/time -f 'line$n %e s' sh -c '$line'" \
        >"$work/line$n.log" 2>&1 || rc=$?
    grep "^line$n " "$work/line$n.log" || true
    echo "line$n rc $rc, load $(load)"
    secs=$(sed -n "s/^line$n \([0-9.]*\) s$/\1/p" "$work/line$n.log")
    [ $rc != 0 ] || [ -z "$secs" ] ||
        BENCH_COMMAND="bench/fresh_machine.sh WORKDIR line$n" \
        BENCH_COMMIT=$(git -C "$r/root/daxprobe" rev-parse --short HEAD) \
        python3 "$src/bench/result_file.py" "fresh-machine-line$n" \
            "a fresh Debian 12 chroot, load at the end $(load)" \
            "README line $n verbatim" s "$secs" "<= $4 s"
    return $rc
}

line1() {
    r=$work/line1
    fresh "$r"
    git clone -q "$src" "$r/root/daxprobe"
    run_line "$r" 1 '^packaging/install-deps.sh' 300 || { tail -30 "$work/line1.log"; exit 1; }
}

# Line 2 in line 1's chroot, then what Meson's log says ran.
line2() {
    r=$work/line1
    [ -d "$r/root/daxprobe/build" ] || { echo "no $r/root/daxprobe/build: run line1 first" >&2; exit 2; }
    case " $mounted " in *" $r "*) ;; *) bind "$r" ;; esac
    rc=0
    run_line "$r" 2 '^meson test' 900 || rc=$?
    python3 - "$r/root/daxprobe/build/meson-logs/testlog.json" <<'PY'
import collections, json, sys
counts, odd = collections.Counter(), []
for line in open(sys.argv[1]):
    t = json.loads(line)
    counts[t["result"]] += 1
    if t["result"] not in ("OK", "EXPECTEDFAIL"):
        odd.append(f"  {t['result']} {t['name']} ({t.get('duration', 0):.0f} s)")
print(f"line2 tests: {counts['OK']} OK, {counts['FAIL']} FAIL, {counts['SKIP']} SKIP"
      + "".join(f", {n} {k}" for k, n in counts.items() if k not in ("OK", "FAIL", "SKIP")))
print("\n".join(odd))
PY
    [ $rc = 0 ] || { tail -30 "$work/line2.log"; exit 1; }
}

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
line1) line1 ;;
line2) line2 ;;
both) line1; line2 ;;
*) echo "usage: $0 WORKDIR apt|line1|line2|both" >&2; exit 2 ;;
esac
