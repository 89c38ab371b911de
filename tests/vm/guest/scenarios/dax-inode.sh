# Per-file DAX: fsdax, XFS mounted without a dax option (dax=inode). A
# directory gets FS_XFLAG_DAX (xfs_io chattr +x): a file created in it
# inherits the flag and is DAX; a file in the root is not.
scenario_prepare() {
    run ndctl create-namespace -f -e namespace0.0 -m fsdax
    dev=$(first_pmem)
    mkfs_dev xfs $dev
    mount_dev xfs $dev ""
    run mkdir $PMEM_MNT/daxdir
    run xfs_io -c 'chattr +x' $PMEM_MNT/daxdir
    run dd if=/dev/zero of=$PMEM_MNT/daxdir/flagged bs=1M count=2 conv=fsync
    run dd if=/dev/zero of=$PMEM_MNT/plain bs=1M count=2 conv=fsync
    DAXPROBE_ARGS="--path $PMEM_MNT/daxdir/flagged --path $PMEM_MNT/plain"
    kernel_view flagged $PMEM_MNT/daxdir/flagged
    kernel_view plain $PMEM_MNT/plain
}
