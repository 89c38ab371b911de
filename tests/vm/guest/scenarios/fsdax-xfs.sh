# fsdax namespace, XFS on 2 MiB stripe units mounted -o dax=always: DAX active.
scenario_prepare() {
    run ndctl create-namespace -f -e namespace0.0 -m fsdax
    dev=$(first_pmem)
    mkfs_dev xfs $dev
    mount_dev xfs $dev dax=always
    write_and_reread $PMEM_MNT/testfile
    DAXPROBE_ARGS="--path $PMEM_MNT/testfile"
    # Allocated whole, on 2 MiB stripe units: every write fault should be PMD.
    run fallocate -l 32M $PMEM_MNT/pmdfile
    DAXPROBE_PROFILE="--write --path $PMEM_MNT/pmdfile"
    # The kernel's answer on the DIMM's health: QEMU's NVDIMM has no SMART.
    ndctl list -BDH > $R/ndctl-dimms.json 2>> $R/commands.log
}

# The workload commands: a mapping of the fallocated file inside a profiled
# command (counted through inherit), and the built-in exercise.
scenario_after() {
    profile_cmd profile-cmd -- daxprobe profile --write --path $PMEM_MNT/pmdfile
    exercise_file $PMEM_MNT/exercise
}
