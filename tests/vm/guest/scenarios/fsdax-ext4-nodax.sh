# fsdax namespace but ext4 mounted without dax: the page cache is used.
scenario_prepare() {
    run ndctl create-namespace -f -e namespace0.0 -m fsdax
    dev=$(first_pmem)
    mkfs_dev ext4 $dev
    mount_dev ext4 $dev ""
    write_and_reread $PMEM_MNT/testfile
    DAXPROBE_ARGS="--path $PMEM_MNT/testfile"
    DAXPROBE_PROFILE="--path $PMEM_MNT/testfile"
}
