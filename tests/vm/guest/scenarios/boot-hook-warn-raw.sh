# The packaged boot check, daxprobe.mode=warn, on a raw namespace with XFS
# -o dax=always (DAX silently off): verdict and remedies logged, boot goes on.
. /daxprobe-vm/boot-hook.sh
scenario_prepare() {
    dev=$(first_pmem)
    mkfs_dev xfs $dev
    mount_dev xfs $dev dax=always
    boot_hook_scenario $dev
}
