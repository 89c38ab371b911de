# The fs_dax tracepoints' "unusable" direction: tracefs not mounted. daxprobe
# must say they are unusable and why (the kernel's mount table: no tracefs);
# its profile then has no DAX fault counts. tracefs is mounted again after.
scenario_prepare() {
    run ndctl create-namespace -f -e namespace0.0 -m fsdax
    dev=$(first_pmem)
    mkfs_dev xfs $dev
    mount_dev xfs $dev dax=always
    run dd if=/dev/zero of=$PMEM_MNT/testfile bs=1M count=8 conv=fsync
    run umount /sys/kernel/tracing
    DAXPROBE_ARGS="--path $PMEM_MNT/testfile"
    DAXPROBE_PROFILE="--path $PMEM_MNT/testfile"
}

scenario_after() {
    run mount -t tracefs tracefs /sys/kernel/tracing
}
