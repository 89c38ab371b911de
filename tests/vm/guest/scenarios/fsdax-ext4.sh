# fsdax namespace (align 2M), ext4 mounted -o dax: DAX active.
scenario_prepare() {
    run ndctl create-namespace -f -e namespace0.0 -m fsdax
    dev=$(first_pmem)
    mkfs_dev ext4 $dev
    mount_dev ext4 $dev dax
    write_and_reread $PMEM_MNT/testfile
    # The kernel's own extents of the profiled file (pmd_layout_checks.py).
    xfs_io -c "fiemap -v" $PMEM_MNT/testfile > $R/fiemap.txt 2>> $R/commands.log
    DAXPROBE_ARGS="--path $PMEM_MNT/testfile"
    DAXPROBE_PROFILE="--write --path $PMEM_MNT/testfile"
}

# The workload commands: dd reading the dd-written file (no page cache on
# DAX), a mapping of it inside a profiled command (ext4 placed it off the
# 2 MiB grid: fallbacks and PTE faults, counted through inherit), and the
# built-in exercise on a fallocated file.
scenario_after() {
    drop_caches
    profile_cmd profile-dd --path $PMEM_MNT/testfile -- dd if=$PMEM_MNT/testfile of=/dev/null bs=1M
    profile_cmd profile-cmd -- daxprobe profile --write --path $PMEM_MNT/testfile
    exercise_file $PMEM_MNT/exercise
}
