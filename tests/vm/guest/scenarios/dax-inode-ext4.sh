# Per-file DAX on ext4: fsdax, mounted -o dax=inode. A directory gets the DAX
# flag (xfs_io chattr +x works on ext4 too): a file created in it inherits
# the flag and is DAX; a file in the root is not.
scenario_prepare() {
    run ndctl create-namespace -f -e namespace0.0 -m fsdax
    dev=$(first_pmem)
    mkfs_dev ext4 $dev
    mount_dev ext4 $dev dax=inode
    run mkdir $PMEM_MNT/daxdir
    run xfs_io -c 'chattr +x' $PMEM_MNT/daxdir
    run dd if=/dev/zero of=$PMEM_MNT/daxdir/flagged bs=1M count=2 conv=fsync
    run dd if=/dev/zero of=$PMEM_MNT/plain bs=1M count=2 conv=fsync
    DAXPROBE_ARGS="--path $PMEM_MNT/daxdir/flagged --path $PMEM_MNT/plain"
    kernel_view flagged $PMEM_MNT/daxdir/flagged
    kernel_view plain $PMEM_MNT/plain
}
