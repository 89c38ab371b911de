# virtio-pmem alone (QEMU virtio-pmem-pci, no NVDIMM, no NFIT): fsdax on its
# namespace, ext4 -o dax. Files are DAX; MAP_SYNC is refused by design.
scenario_prepare() {
    run modprobe virtio_pmem
    run ndctl create-namespace -f -e namespace0.0 -m fsdax
    dev=$(first_pmem)
    mkfs_dev ext4 $dev
    mount_dev ext4 $dev dax
    run dd if=/dev/zero of=$PMEM_MNT/testfile bs=1M count=2 conv=fsync
    DAXPROBE_ARGS="--path $PMEM_MNT/testfile"
    kernel_view testfile $PMEM_MNT/testfile
}
