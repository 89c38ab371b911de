# Media errors found by address-range scrub on the kernel's NVDIMM test bus
# (issue 35, runs after nfit-test in its boot). An UNMOUNTED fsdax namespace
# and a devdax namespace on nfit_test.0's region1, each with 8 sectors
# injected through ARS (`ndctl inject-error`, then a scrub). The kernel's
# answers: `ndctl list --media-errors` per namespace, the fsdax disk's
# badblocks file, a direct read of its damaged sectors. After the check, the
# remedy daxprobe printed for each (from check.json), then the same answers
# and a second check (nfit_ars_checks.py compares).

# ars_namespace MODE: a 16 MiB namespace on region1, its name on stdout.
ars_namespace() {
    ndctl create-namespace -b nfit_test.0 -r region1 -m $1 -s 16M > $R/create-$1.json \
        2>> $R/commands.log
    sed -n 's/^ *"dev":"\(namespace[0-9.]*\)".*/\1/p' $R/create-$1.json | head -n 1
}

# media_errors NAME: ndctl's list of each namespace's media errors.
media_errors() {
    ndctl list -N -n $ARS_FS --media-errors > $R/media-errors-fsdax-$1.json 2>> $R/commands.log
    ndctl list -N -n $ARS_DAX --media-errors > $R/media-errors-devdax-$1.json 2>> $R/commands.log
    cat /sys/block/$ARS_DISK/badblocks > $R/badblocks-$1.txt 2>&1
}

# read_range NAME: a direct read of the fsdax disk's damaged sectors.
read_range() {
    dd if=/dev/$ARS_DISK of=/dev/null bs=512 skip=$ARS_BLOCK count=$ARS_COUNT iflag=direct \
        > $R/read-$1.txt 2>&1
    echo "rc=$?" >> $R/read-$1.txt
}

# Sectors 64..71 of each namespace's data area (ndctl inject-error's
# --block is namespace-relative).
ARS_BLOCK=64
ARS_COUNT=8

scenario_prepare() {
    ARS_FS=$(ars_namespace fsdax)
    ARS_DAX=$(ars_namespace devdax)
    ARS_DISK=$(sed -n 's/^ *"blockdev":"\(pmem[0-9.]*\)".*/\1/p' $R/create-fsdax.json | head -n 1)
    ARS_CHAR=$(sed -n 's/^ *"chardev":"\(dax[0-9.]*\)".*/\1/p' $R/create-devdax.json | head -n 1)
    printf 'fsdax=%s\ndevdax=%s\ndisk=%s\nchardev=%s\nblock=%s\ncount=%s\n' "$ARS_FS" \
        "$ARS_DAX" "$ARS_DISK" "$ARS_CHAR" $ARS_BLOCK $ARS_COUNT > $R/ars-injected.txt
    run ndctl inject-error -b nfit_test.0 --block=$ARS_BLOCK --count=$ARS_COUNT $ARS_FS
    run ndctl inject-error -b nfit_test.0 --block=$ARS_BLOCK --count=$ARS_COUNT $ARS_DAX
    run ndctl start-scrub nfit_test.0
    run ndctl wait-scrub nfit_test.0
    media_errors before
    read_range before
    # units: the region's list (sectors from the region's start) and where
    # each namespace's data starts
    for f in /sys/bus/nd/devices/region1/resource /sys/bus/nd/devices/region1/badblocks \
        /sys/bus/nd/devices/region1/*/resource /sys/bus/nd/devices/$ARS_FS/resource; do
        echo "$f=$(cat $f 2>&1 | tr '\n' ' ')"
    done > $R/ars-sysfs.txt 2>&1
}

# The remedy of each namespace as check.json prints it, run; then the
# kernel's lists, the read, and the check again.
scenario_after() {
    grep -o "ndctl clear-errors [a-z0-9.]*" $R/check.json | sort -u > $R/clear-cmds.txt
    while read cmd; do run $cmd; done < $R/clear-cmds.txt
    media_errors after
    read_range after
    daxprobe check --json > $R/check-after.json 2> $R/check-after.stderr
    echo $? > $R/check-after.rc
}
