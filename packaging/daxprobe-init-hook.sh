#!/bin/sh
# Guest init hook: one fast check at boot, for appliances whose /init is a
# shell script (libguestfs-style) rather than systemd. Source or run it after
# the pmem filesystems are mounted.
#
#   daxprobe.strict   on the kernel command line: a problem stops the boot
#                     (exit 1) instead of only being logged.
#
# The JSON report is kept in /run/daxprobe/check.json; the verdict goes to
# the kernel log so it shows on the console and in dmesg.
DAXPROBE=${DAXPROBE:-daxprobe}
mkdir -p /run/daxprobe
"$DAXPROBE" check --json >/run/daxprobe/check.json 2>/run/daxprobe/check.log
rc=$?
case $rc in
    0) msg="daxprobe: DAX verified" ;;
    1) msg="daxprobe: PROBLEM: see /run/daxprobe/check.json or run 'daxprobe check'" ;;
    *) msg="daxprobe: the check failed (exit $rc): see /run/daxprobe/check.log" ;;
esac
[ -w /dev/kmsg ] && echo "$msg" >/dev/kmsg
echo "$msg" >&2
if [ $rc -ne 0 ] && grep -qw daxprobe.strict /proc/cmdline 2>/dev/null; then
    exit $rc
fi
exit 0
