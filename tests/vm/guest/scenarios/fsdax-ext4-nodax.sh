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

# The workload commands: dd reading the file after dropping caches (Cached
# and the file's residency grow by its size), and the built-in exercise.
scenario_after() {
    drop_caches
    profile_cmd profile-dd --path $PMEM_MNT/testfile -- dd if=$PMEM_MNT/testfile of=/dev/null bs=1M
    exercise_file $PMEM_MNT/exercise
}
