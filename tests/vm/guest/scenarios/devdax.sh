# devdax namespace: a character device /dev/dax0.0, no filesystem.
#
# Then a media error on it as a platform reports one at run time (issue 35):
# a machine check at a physical address inside the NVDIMM's SPA range. QEMU's
# NVDIMM has no ARS or error-injection DSM and a devdax namespace has no
# writable badblocks file; the kernel's own MCE path does it. mce-inject's
# software injection ("sw": mce_log(), no #MC, no MSR writes) runs the
# decoder chain, where nfit_handle_mce() (drivers/acpi/nfit/mce.c) adds an
# uncorrected memory error in a pmem SPA range to the bus's bad ranges and
# tells the region, whose badblocks (and `ndctl list -M`) then show it.
# QEMU's TCG `-cpu max` is an AMD family 0xf CPU without SMCA: a memory
# error is bank 4 with extended error code 8 (amd_mce_is_memory_error), and
# that case's address is usable (mce_usable_address: ADDRV; newer kernels name
# the legacy bank-4 case). mce_severity is not run for a software
# injection: no action-optional severity, so no memory_failure() on the
# pfn (uc_decode_notifier skips it).

MCE_OFFSET=32768 # byte of /dev/dax0.0: sectors 64-71
MCE_MISC=0xc     # MCi_MISC address LSB 12: nfit marks a 4 KiB range
# MCi_STATUS: VAL, UC, EN, ADDRV; extended error code 8 (bits 16-20)
MCE_STATUS=0xb400000000080000
MCE_BANK=4

# mce_lists NAME: the kernel's answers: ndctl's media errors of the
# namespace and the region's list.
mce_lists() {
    ndctl list -N -n namespace0.0 --media-errors > $R/media-errors-$1.json 2>> $R/commands.log
    cat /sys/bus/nd/devices/region0/badblocks > $R/region-badblocks-$1.txt 2>&1
}

scenario_prepare() {
    run ndctl create-namespace -f -e namespace0.0 -m devdax
    ls -l /dev/dax* >> $R/commands.log 2>&1
    # what decides the MCE's decoding, and what the bus can do
    {
        echo "vendor=$(sed -n 's/^vendor_id[^:]*: //p' /proc/cpuinfo | head -n 1)"
        echo "family=$(sed -n 's/^cpu family[^:]*: //p' /proc/cpuinfo | head -n 1)"
        grep -m1 '^flags' /proc/cpuinfo | grep -qw smca && echo "smca=yes" || echo "smca=no"
        echo "commands=$(cat /sys/bus/nd/devices/ndbus0/commands)"
        echo "dsm_mask=$(cat /sys/bus/nd/devices/ndbus0/nfit/dsm_mask 2>&1)"
        echo "scrub=$(cat /sys/bus/nd/devices/ndbus0/nfit/scrub 2>&1)"
        echo "region_resource=$(cat /sys/bus/nd/devices/region0/resource)"
        echo "dax_resource=$(cat /sys/bus/dax/devices/dax0.0/resource)"
        echo "offset=$MCE_OFFSET"
    } > $R/mce-facts.txt 2>&1
    mce_lists before
    start=$(cat /sys/bus/dax/devices/dax0.0/resource)
    addr=$(printf '0x%x' $((start + MCE_OFFSET)))
    run modprobe mce-inject
    grep -q ' /sys/kernel/debug ' /proc/mounts || mount -t debugfs debugfs /sys/kernel/debug
    inj=/sys/kernel/debug/mce-inject
    echo "+ mce-inject sw addr=$addr misc=$MCE_MISC status=$MCE_STATUS bank=$MCE_BANK" \
        >> $R/commands.log
    echo sw > $inj/flags && echo $addr > $inj/addr && echo $MCE_MISC > $inj/misc &&
        echo $MCE_STATUS > $inj/status && echo $MCE_BANK > $inj/bank
    echo "= $?" >> $R/commands.log
    echo "addr=$addr" >> $R/mce-facts.txt
    # The decoder chain runs in a worker: wait for the region's notification.
    run kernel-answers --wait-list /sys/bus/nd/devices/region0/badblocks 30
    mce_lists after-mce
}

# daxprobe prints no clear-errors where the bus has no Clear Error DSM (and
# says so). What the kernel does with it anyway: the list stays. And a load
# of the listed range: device-DAX does not check the list, and QEMU's memory
# there is not poisoned.
scenario_after() {
    grep -o "ndctl clear-errors [a-z0-9.]*" $R/check.json | sort -u > $R/clear-cmds.txt
    run ndctl clear-errors namespace0.0
    mce_lists after-clear
    xfs_io -c "mmap -r 0 2m" -c "mread -v $MCE_OFFSET 16" /dev/dax0.0 > $R/mce-load.txt 2>&1
    echo "rc=$?" >> $R/mce-load.txt
    daxprobe check --json > $R/check-after.json 2> $R/check-after.stderr
    echo $? > $R/check-after.rc
}
