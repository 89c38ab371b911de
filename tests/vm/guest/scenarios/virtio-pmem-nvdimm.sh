# virtio-pmem beside an NVDIMM: two nd buses (ACPI.NFIT and virtio-pmem).
# Each namespace goes fsdax and gets ext4 -o dax: the NVDIMM's at /mnt/pmem,
# virtio-pmem's at /mnt/vpmem. Names come from ndctl, never assumed.
VPMEM_MNT=/mnt/vpmem
scenario_prepare() {
    run modprobe virtio_pmem
    ndctl list -BRN > $R/ndctl-before.json 2>&1
    for ns in $(ndctl list -N | awk -F'"' '/"dev":/ {print $4}'); do
        run ndctl create-namespace -f -e $ns -m fsdax
    done
    for region in $(ndctl list -R | awk -F'"' '/"dev":/ {print $4}'); do
        provider=$(cat /sys/bus/nd/devices/$region/../provider 2>/dev/null)
        blk=$(ndctl list -N -r $region | awk -F'"' '/"blockdev":/ {print $4}')
        echo "$region provider=$provider blockdev=$blk" >> $R/regions.txt
        if [ "$provider" = virtio-pmem ]; then mnt=$VPMEM_MNT; else mnt=$PMEM_MNT; fi
        mkfs_dev ext4 /dev/$blk
        mkdir -p $mnt
        run mount -t ext4 -o dax /dev/$blk $mnt
        run dd if=/dev/zero of=$mnt/testfile bs=1M count=2 conv=fsync
    done
    DAXPROBE_ARGS="--path $PMEM_MNT/testfile --path $VPMEM_MNT/testfile"
    kernel_view nvdimm $PMEM_MNT/testfile
    kernel_view vpmem $VPMEM_MNT/testfile
}

# The host's side: the real collector on the agent port reads QEMU's command
# line and maps (verdict_checks.virtio_pmem_host) and must see both backing
# files, each with whether guest writes reach it.
scenario_after() { agent_for_host; }
