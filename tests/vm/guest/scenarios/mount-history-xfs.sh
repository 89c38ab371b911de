# Mount history 2: XFS -o dax=always on a raw namespace mounts with DAX
# silently off ("... Turning off DAX."); it is unmounted and mounted again
# without dax. The old line stays in the log but describes the old mount.
scenario_prepare() {
    dev=$(first_pmem)
    mkfs_dev xfs $dev
    mount_dev xfs $dev dax=always
    cp $R/mount.txt $R/mount-first.txt
    grep " $PMEM_MNT " /proc/self/mountinfo > $R/mountinfo-first.txt
    run umount $PMEM_MNT
    mount_dev xfs $dev ""
    run dd if=/dev/zero of=$PMEM_MNT/testfile bs=1M count=2 conv=fsync
    DAXPROBE_ARGS="--path $PMEM_MNT/testfile"
    kernel_view testfile $PMEM_MNT/testfile
}
