#!/bin/sh
# Guest boot check: `daxprobe check` once the filesystems are up, its verdict
# in the kernel log. Run by the initramfs-tools script and the dracut module
# once the root (or the mount named by daxprobe.mount=) is mounted, or
# sourced/run by an appliance's own /init after it mounts its pmem.
#
# The kernel parameter daxprobe.mode= chooses what a problem does:
#   warn   (default) log the verdict and the remedy, boot on
#   strict stop the boot: exit 1 (the caller panics / drops to a shell)
#   off    do not run the check at all
# daxprobe.strict (older spelling) means daxprobe.mode=strict.
#
# The JSON report is kept in /run/daxprobe/check.json. Exit status: 0 go on,
# 1 strict mode and a problem (or the check failed).
DAXPROBE=${DAXPROBE:-daxprobe}
CMDLINE=${DAXPROBE_CMDLINE:-/proc/cmdline}
KMSG=${DAXPROBE_KMSG:-/dev/kmsg}

# Shell built-ins only, besides daxprobe and mkdir: an initramfs may have
# klibc's few tools and no busybox (initramfs-tools without its Recommends),
# so no cat, sed, sort or tail; the remedies must reach the console exactly
# when strict mode stops the boot.
cmdline=
read -r cmdline <"$CMDLINE" 2>/dev/null
mode=warn
for arg in $cmdline; do
    case $arg in
        daxprobe.mode=*) mode=${arg#daxprobe.mode=} ;;
        daxprobe.strict) mode=strict ;;
    esac
done
case $mode in
    warn|strict) ;;
    off) exit 0 ;;
    *)
        echo "daxprobe: unknown daxprobe.mode=$mode (warn|strict|off): using warn" >&2
        mode=warn ;;
esac

log() {
    [ -w "$KMSG" ] && echo "daxprobe: $*" >>"$KMSG"
    echo "daxprobe: $*" >&2
}

# A machine without an NVDIMM bus has nothing to check: quiet in warn mode
# (a generic image boots everywhere), a stop in strict mode (pmem was expected).
if [ "$mode" = warn ] && [ ! -d "${DAXPROBE_SYSFS:-/sys}/bus/nd" ]; then
    log "no NVDIMM bus (/sys/bus/nd): nothing to check"
    exit 0
fi

mkdir -p /run/daxprobe
# --no-active: nothing is written at boot (the MAP_SYNC test file is for the
# running system); the verdict itself does not need it.
"$DAXPROBE" check --json --no-active >/run/daxprobe/check.json 2>/run/daxprobe/check.log
rc=$?
# One line per finding for the console: the overall verdict, then each
# distinct remedy (the JSON holds the evidence). dump(2) layout: the overall
# verdict's code is the one indented by 4.
summary=
remedies=
while IFS= read -r line; do
    case $line in
        '    "code": "'*)
            code=${line#*\"code\": \"}
            summary=${code%%\"*} ;;
        *'"remedy": "'*)
            remedy=${line#*\"remedy\": \"}
            remedy=${remedy%,}
            remedy=${remedy%\"}
            case "$remedies" in
                *"
$remedy
"*) ;;
                *) remedies="${remedies:-
}$remedy
" ;;
            esac ;;
    esac
done </run/daxprobe/check.json
last=
while IFS= read -r line; do last=$line; done </run/daxprobe/check.log
case $rc in
    0) log "DAX verified (mode $mode)" ;;
    1)
        log "PROBLEM: ${summary:-see /run/daxprobe/check.json} (mode $mode)"
        printf '%s' "$remedies" | while IFS= read -r remedy; do
            [ -n "$remedy" ] && log "remedy: $remedy"
        done
        ;;
    *) log "the check failed (exit $rc, mode $mode): $last" ;;
esac
if [ "$mode" = strict ] && [ $rc -ne 0 ]; then
    log "daxprobe.mode=strict: stopping the boot"
    exit 1
fi
exit 0
