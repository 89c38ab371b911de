# Raw namespace (no labels, no create-namespace): XFS -o dax=always mounts
# fine but the kernel logs "Turning off DAX": DAX is silently off.
scenario_prepare() {
    dev=$(first_pmem)
    mkfs_dev xfs $dev
    mount_dev xfs $dev dax=always
}
