# One-time setup for bench/appliance.py: turn the pmem device
# (daxprobe.variant=nvdimm: an NVDIMM; virtio-pmem: a virtio-pmem device) into
# an fsdax namespace and copy the appliance's root image (virtio-blk, /dev/vda)
# onto it. The namespace's info block lives in the backing file, so every
# boot of a copy of that file comes up fsdax with the same filesystem.
# daxprobe.map=mem keeps the namespace's struct pages in guest RAM instead of
# on the device (ndctl --map=mem): a backing file QEMU maps read-only
# (bench/sharing.py) cannot take the guest's memmap writes.
DAXPROBE_REFERENCE=0

# wait_for PATH: the devices appear asynchronously after modprobe (bounded).
wait_for() {
    i=0
    while [ ! -e "$1" ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i + 1)); done
    [ -e "$1" ]
}

scenario_prepare() {
    variant=$(arg daxprobe.variant)
    [ "$variant" = virtio-pmem ] && run modprobe virtio_pmem
    run modprobe virtio_blk
    wait_for /dev/vda || { echo "no /dev/vda" > $R/error.txt; return 1; }
    wait_for /sys/bus/nd/devices/namespace0.0 || { echo "no namespace0.0" > $R/error.txt; return 1; }
    map=$(arg daxprobe.map)
    run ndctl create-namespace -f -e namespace0.0 -m fsdax --map=${map:-dev} || return 1
    dev=$(first_pmem)
    cat /sys/block/${dev#/dev/}/queue/dax > $R/queue-dax
    run dd if=/dev/vda of=$dev bs=1M conv=fsync || return 1
    sync
    echo "$dev $(cat /sys/block/${dev#/dev/}/size)" > $R/setup.ok
}
