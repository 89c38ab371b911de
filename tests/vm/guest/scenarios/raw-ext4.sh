# Raw namespace: ext4 -o dax fails with EINVAL ("DAX unsupported by block
# device."). The failure is the expected outcome; daxprobe still runs.
scenario_prepare() {
    dev=$(first_pmem)
    mkfs_dev ext4 $dev
    mount_dev ext4 $dev dax || true
}
