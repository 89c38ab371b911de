# fsdax namespace (align 2M), ext4 mounted -o dax: DAX active.
scenario_prepare() {
    run ndctl create-namespace -f -e namespace0.0 -m fsdax
    dev=$(first_pmem)
    mkfs_dev ext4 $dev
    mount_dev ext4 $dev dax
    write_and_reread $PMEM_MNT/testfile
    DAXPROBE_ARGS="--path $PMEM_MNT/testfile"
    DAXPROBE_PROFILE="--write --path $PMEM_MNT/testfile"
}
