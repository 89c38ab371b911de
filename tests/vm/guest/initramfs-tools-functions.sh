# /scripts/functions of the test guest: a stand-in for initramfs-tools' own,
# with only what the packaged local-bottom script (and run_scripts) use.
# The test guest's /init is busybox sh, not initramfs-tools' init: this file
# lets the packaged script run unchanged, the way initramfs-tools' init runs
# it (run_scripts /scripts/local-bottom, once the root is mounted).

_log_msg() {
    [ "${quiet:-n}" = y ] && return
    # shellcheck disable=SC2059
    printf "$@"
}
log_success_msg() { _log_msg "Success: %s\n" "$*"; }
log_failure_msg() { _log_msg "Failure: %s\n" "$*"; }
log_warning_msg() { _log_msg "Warning: %s\n" "$*"; }
log_begin_msg() { _log_msg "Begin: %s ... " "$*"; }
log_end_msg() { _log_msg "done.\n"; }

# initramfs-tools' panic prints the reason and then stops the boot: a rescue
# shell on the console (or a reboot with panic=N). Nobody types into this
# guest's console, so the stand-in records the reason in
# /run/initramfs/panic and ends the script; the test bed's /init reads that
# file as "the boot stopped here" and goes no further than shipping results.
panic() {
    echo "$@"
    mkdir -p /run/initramfs
    echo "$*" >>/run/initramfs/panic
    echo "initramfs panic: $*" >/dev/kmsg
    exit 1
}

# As initramfs-tools: the phase's scripts in the order mkinitramfs cached in
# ORDER (each line runs one script as its own process).
run_scripts() {
    initdir=$1
    [ -d "$initdir" ] || return
    shift
    # shellcheck disable=SC1091
    [ -f "$initdir/ORDER" ] && . "$initdir/ORDER"
}
