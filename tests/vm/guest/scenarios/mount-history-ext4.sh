# Mount history 1: on a raw namespace `mount -o dax` (ext4) fails ("DAX
# unsupported by block device."), then the same filesystem is mounted without
# dax. The refusal belongs to the failed attempt: history, not the state of the
# mount that exists.
scenario_prepare() {
    dev=$(first_pmem)
    mkfs_dev ext4 $dev
    mount_dev ext4 $dev dax && echo "dax mount unexpectedly succeeded" >> $R/error.txt
    cp $R/mount.txt $R/mount-first.txt
    mount_dev ext4 $dev ""
    run dd if=/dev/zero of=$PMEM_MNT/testfile bs=1M count=2 conv=fsync
    DAXPROBE_ARGS="--path $PMEM_MNT/testfile"
    kernel_view testfile $PMEM_MNT/testfile
}
