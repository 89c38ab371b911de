# The packaged boot check at boot, the way initramfs-tools runs it: once the
# root is mounted, its init runs `run_scripts /scripts/local-bottom`, which
# runs the package's local-bottom script (from the guest .deb, in the ORDER
# file mkinitramfs writes), which runs daxprobe-init-hook.sh with the mode
# from daxprobe.mode= on the kernel command line. Here the pmem mount stands
# for the root (rootmnt) and /scripts/functions is the test bed's stand-in
# (initramfs-tools-functions.sh). Sourced by the boot-hook-* snippets.

# boot_hook: run the phase, record the outcome (continued, or stopped by the
# script's panic), the uptime before and after (the hook's cost at boot) and
# what it left: its report (/run/daxprobe/check.json: the shipped check.json,
# compared with ndctl like every scenario's), its log and its console output.
boot_hook() {
    rootmnt=$PMEM_MNT
    export rootmnt
    step "boot-hook"
    t0=$(cut -d' ' -f1 /proc/uptime)
    (
        . /scripts/functions
        run_scripts /scripts/local-bottom
    ) >$R/boot-hook.out 2>&1
    t1=$(cut -d' ' -f1 /proc/uptime)
    if [ -s /run/initramfs/panic ]; then
        outcome=stopped
        cp /run/initramfs/panic $R/boot-hook-panic.txt
    else
        outcome=continued
    fi
    printf 'outcome=%s\nuptime_before=%s\nuptime_after=%s\n' "$outcome" "$t0" "$t1" >$R/boot-hook.txt
    echo "+ run_scripts /scripts/local-bottom ($(arg daxprobe.mode)): $outcome, $t0 -> $t1" >>$R/commands.log
    cp /run/daxprobe/check.json $R/check.json 2>/dev/null
    cp /run/daxprobe/check.log $R/check.stderr 2>/dev/null
    step "boot-hook $outcome"
}

# boot_hook_scenario DEV: the hook on the mounted DEV, then (the test bed's
# post-mortem, after the boot went on or stopped) the kernel's own answer on
# a file there and the block device's queue/dax, and ndctl's listing.
boot_hook_scenario() {
    boot_hook
    run dd if=/dev/zero of=$PMEM_MNT/kernel-file bs=1M count=2
    kernel_view root $PMEM_MNT/kernel-file
    cat /sys/block/${1##*/}/queue/dax >$R/queue-dax.txt 2>&1
    ndctl list -BRN >$R/ndctl-list.json 2>$R/ndctl-list.stderr
    daxctl list >$R/daxctl-list.json 2>/dev/null
    kernel_sources
    # The hook's report is the check this scenario asserts on: no second one.
    DAXPROBE_REFERENCE=0
}
