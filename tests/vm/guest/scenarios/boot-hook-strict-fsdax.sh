# The packaged boot check, daxprobe.mode=strict, on an fsdax namespace with
# ext4 -o dax (DAX in effect): "DAX verified" logged, boot goes on.
. /daxprobe-vm/boot-hook.sh
scenario_prepare() {
    run ndctl create-namespace -f -e namespace0.0 -m fsdax
    dev=$(first_pmem)
    mkfs_dev ext4 $dev
    mount_dev ext4 $dev dax
    boot_hook_scenario $dev
}
