# The kernel's NVDIMM test bus (nfit_test, issue 36): two buses, six DIMMs,
# label areas, smart/health and shutdown-state injection, and DIMMs whose
# flags say not armed or flush failed. Labels first (without them every
# namespace is raw and label-less, as ndctl's tests know), then an fsdax
# namespace mounted with DAX, then injected health and an unsafe shutdown.
# The reference for DIMMs: `ndctl list -BDRNiMH` after all of that.
scenario_prepare() {
    # Where the checks remember each DIMM's unsafe-shutdown count.
    mkdir -p /tmp/daxprobe-state
    DAXPROBE_ARGS="--state-dir /tmp/daxprobe-state"
    ndctl list -BDRNiMH > $R/ndctl-full-before.json 2>> $R/commands.log
    run ndctl disable-region -b nfit_test.0 all
    run ndctl init-labels -f -b nfit_test.0 all
    run ndctl enable-region -b nfit_test.0 all
    run ndctl create-namespace -b nfit_test.0 -r region0 -m fsdax --align 4K -s 16M
    dev=$(first_pmem)
    # On 2 MiB stripes: a file allocated whole lies on 2 MiB-aligned extents,
    # so its 2 MiB faults can only fall back in the device (nfit_test's
    # pmem-dax.c hands out one page at a time).
    run mkfs.ext4 -F -q -b 4096 -E stride=512,stripe_width=512 $dev
    mount_dev ext4 $dev dax
    run fallocate -l 8M $PMEM_MNT/pmdfile
    xfs_io -c "fiemap -v" $PMEM_MNT/pmdfile > $R/fiemap.txt 2>> $R/commands.log
    DAXPROBE_PROFILE="--write --path $PMEM_MNT/pmdfile"
    # A device-DAX namespace with 4 KiB pages: daxprobe's alignment hint.
    run ndctl create-namespace -b nfit_test.0 -r region1 -m devdax --align 4K -s 16M
    run ndctl inject-smart -b nfit_test.0 nmem1 -f
    run ndctl inject-smart -b nfit_test.0 nmem2 -U
    ndctl list -BDRNiMH > $R/ndctl-full.json 2>> $R/commands.log
    for d in /sys/bus/nd/devices/nmem*; do
        echo "== $d"; ls $d $d/nfit 2>&1
        for a in $d/nfit/* $d/state $d/flags; do [ -f $a ] && echo "$a=$(cat $a 2>&1)"; done
    done > $R/nmem-sysfs.txt 2>&1
}

# Issue 36, part 3: the remedies daxprobe gave here, run, and what the kernel
# made of them (nfit_checks.py compares with check.json).
scenario_after() {
    # The device-DAX namespace's alignment hint, as check.json has it.
    cmd=$(grep -o 'ndctl create-namespace -f -e [a-z0-9.]* -m devdax --align 2M' $R/check.json | head -n 1)
    echo "$cmd" > $R/realign-cmd.txt
    [ -n "$cmd" ] && run $cmd
    ndctl list -b nfit_test.0 -r region1 -N > $R/ndctl-region1-after.json 2>> $R/commands.log
    # What daxprobe withholds on the 4 MiB region: ndctl refuses it.
    run ndctl create-namespace -f -e namespace3.0 -m fsdax
    echo $? > $R/small-reconfig.rc
    # An unsafe shutdown of nmem0 (under region0's DAX mount) after the
    # checks above remembered its count: the next check must see the rise.
    cp /tmp/daxprobe-state/dimm-shutdowns.json $R/shutdowns-remembered.json
    run ndctl inject-smart -b nfit_test.0 nmem0 -U
    ndctl list -BDRNiMH > $R/ndctl-full-after.json 2>> $R/commands.log
    daxprobe check --json $DAXPROBE_ARGS > $R/check-after.json 2> $R/check-after.stderr
    echo $? > $R/check-after.rc
    daxprobe check --json $DAXPROBE_ARGS > $R/check-again.json 2> $R/check-again.stderr
}
