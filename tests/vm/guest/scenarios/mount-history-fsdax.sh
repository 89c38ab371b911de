# Mount history 3: XFS -o dax=always on a raw namespace (DAX silently off),
# unmounted; the namespace is reconfigured to fsdax, a new XFS made and mounted
# with dax=always: DAX works now, and the old "Turning off DAX" is history.
scenario_prepare() {
    dev=$(first_pmem)
    mkfs_dev xfs $dev
    mount_dev xfs $dev dax=always
    cp $R/mount.txt $R/mount-first.txt
    run umount $PMEM_MNT
    run ndctl create-namespace -f -e namespace0.0 -m fsdax
    dev=$(first_pmem)
    mkfs_dev xfs $dev
    mount_dev xfs $dev dax=always
    run dd if=/dev/zero of=$PMEM_MNT/testfile bs=1M count=2 conv=fsync
    DAXPROBE_ARGS="--path $PMEM_MNT/testfile"
    kernel_view testfile $PMEM_MNT/testfile
}
