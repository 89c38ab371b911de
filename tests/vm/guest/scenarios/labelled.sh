# A DIMM with a 128K label area (blank at first, so raw): init the labels,
# then create an fsdax namespace in the region; ext4 -o dax.
scenario_prepare() {
    run ndctl disable-region region0
    run ndctl init-labels -f nmem0
    run ndctl enable-region region0
    run ndctl create-namespace -m fsdax -r region0
    dev=$(first_pmem)
    mkfs_dev ext4 $dev
    mount_dev ext4 $dev dax
}
